/**
 * The widget's own texts in every language it speaks. The launcher's few words live in the loader
 * (they are needed before the panel loads); the panel's in the panel. A language the widget does
 * not speak falls back to English.
 */
export const languages = ["en", "de", "fr", "es", "nl"] as const;
export type Language = (typeof languages)[number];

/** The first subtag of a BCP 47 tag when the widget speaks it, else English. */
export function languageOf(tag: string | null | undefined): Language {
  const primary = (tag ?? "").toLowerCase().split("-")[0] ?? "";
  return (languages as readonly string[]).includes(primary) ? (primary as Language) : "en";
}

/** What the loader shows before the panel is loaded: [launcher text, open label, close label]. */
export const launcherTexts: Record<Language, readonly [string, string, string]> = {
  en: ["Chat", "Open chat", "Close chat"],
  de: ["Chat", "Chat öffnen", "Chat schließen"],
  fr: ["Discuter", "Ouvrir le chat", "Fermer le chat"],
  es: ["Chat", "Abrir el chat", "Cerrar el chat"],
  nl: ["Chat", "Chat openen", "Chat sluiten"],
};
