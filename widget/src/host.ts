/**
 * What the loader (loader.ts, in the page from the start) hands the panel (panel.ts, loaded when the
 * visitor first opens the chat): the shadow root to render into, the session, and the events of
 * `window.ChatbotWidget`. Types only: the two are built apart, and only the loader is in the page
 * before the chat opens.
 */
import type { Language } from "./strings.ts";

/** The widget's appearance and greeting, as the session route answers them. */
export interface Greeting {
  title: string;
  color: string;
  position: "right" | "left";
  launcher_label: string;
  starter_questions: string[];
  language: string;
  welcome_message: string;
}

export type WidgetEvent = "open" | "close" | "message";

export interface PanelHost {
  /** Where the panel renders (the launcher is already in it). */
  root: ShadowRoot;
  /** The API's base URL (no trailing slash). */
  api: string;
  chatbotId: string;
  language: Language;
  greeting: Greeting;
  /** The console's preview: the real panel with its greeting, and no session or network. */
  preview: boolean;
  /** A token that works for a while yet, renewing the session when needed (`fresh`: renew now). */
  token(fresh?: boolean): Promise<string>;
  conversationId(): string | null;
  setConversationId(id: string | null): void;
  /** Closes the panel (focus back on the launcher). */
  close(): void;
  emit(event: WidgetEvent, detail?: unknown): void;
  /** Called when another tab (or `identify`, `reset`) changed the session. */
  onSessionChange(listener: () => void): void;
}

export interface Panel {
  show(): void;
  hide(): void;
}

/** What the panel module exports. */
export type MountPanel = (host: PanelHost) => Panel;
