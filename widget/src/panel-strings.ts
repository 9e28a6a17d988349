/** The panel's texts, by language (strings.ts: which languages, and the fallback). */
import type { Language } from "./strings.ts";

export interface PanelTexts {
  close: string;
  conversation: string;
  message: string;
  placeholder: string;
  send: string;
  attach: string;
  removeImage: string;
  image: string;
  typing: string;
  you: string;
  handoff: string;
  person: string;
  handedBack: string;
  closed: string;
  error: string;
  retry: string;
  busy: string;
  unavailable: string;
  imageTooBig: string;
  imageType: string;
  tooManyImages: string;
  sources: string;
  starters: string;
}

export const panelTexts: Record<Language, PanelTexts> = {
  en: {
    close: "Close chat",
    conversation: "Conversation",
    message: "Message",
    placeholder: "Write a message…",
    send: "Send",
    attach: "Add an image",
    removeImage: "Remove image",
    image: "Image",
    typing: "Typing…",
    you: "You",
    handoff: "A person will answer you here shortly.",
    person: "You are chatting with a person.",
    handedBack: "The assistant is answering again.",
    closed: "This conversation has ended. Send a message to start a new one.",
    error: "Sorry, your message could not be sent.",
    retry: "Try again",
    busy: "Too many messages at once. Please wait a moment, then try again.",
    unavailable: "The chat is not available right now. Please try again later.",
    imageTooBig: "That image is too large (at most 3.7 MB).",
    imageType: "Only PNG, JPEG, GIF or WebP images can be sent.",
    tooManyImages: "At most 4 images per message.",
    sources: "Sources",
    starters: "Suggested questions",
  },
  de: {
    close: "Chat schließen",
    conversation: "Unterhaltung",
    message: "Nachricht",
    placeholder: "Nachricht schreiben…",
    send: "Senden",
    attach: "Bild hinzufügen",
    removeImage: "Bild entfernen",
    image: "Bild",
    typing: "Schreibt…",
    you: "Sie",
    handoff: "Gleich antwortet Ihnen hier ein Mensch.",
    person: "Sie chatten mit einem Menschen.",
    handedBack: "Der Assistent antwortet wieder.",
    closed: "Diese Unterhaltung ist beendet. Schreiben Sie, um eine neue zu beginnen.",
    error: "Leider konnte Ihre Nachricht nicht gesendet werden.",
    retry: "Erneut versuchen",
    busy: "Zu viele Nachrichten auf einmal. Bitte warten Sie kurz und versuchen Sie es erneut.",
    unavailable: "Der Chat ist gerade nicht verfügbar. Bitte versuchen Sie es später erneut.",
    imageTooBig: "Dieses Bild ist zu groß (höchstens 3,7 MB).",
    imageType: "Es können nur PNG-, JPEG-, GIF- oder WebP-Bilder gesendet werden.",
    tooManyImages: "Höchstens 4 Bilder pro Nachricht.",
    sources: "Quellen",
    starters: "Vorgeschlagene Fragen",
  },
  fr: {
    close: "Fermer le chat",
    conversation: "Conversation",
    message: "Message",
    placeholder: "Écrivez un message…",
    send: "Envoyer",
    attach: "Ajouter une image",
    removeImage: "Retirer l’image",
    image: "Image",
    typing: "Écrit…",
    you: "Vous",
    handoff: "Une personne va vous répondre ici dans un instant.",
    person: "Vous discutez avec une personne.",
    handedBack: "L’assistant répond de nouveau.",
    closed: "Cette conversation est terminée. Écrivez pour en commencer une nouvelle.",
    error: "Désolé, votre message n’a pas pu être envoyé.",
    retry: "Réessayer",
    busy: "Trop de messages à la fois. Patientez un instant, puis réessayez.",
    unavailable: "Le chat n’est pas disponible pour le moment. Réessayez plus tard.",
    imageTooBig: "Cette image est trop lourde (3,7 Mo au plus).",
    imageType: "Seules les images PNG, JPEG, GIF ou WebP peuvent être envoyées.",
    tooManyImages: "4 images au plus par message.",
    sources: "Sources",
    starters: "Questions suggérées",
  },
  es: {
    close: "Cerrar el chat",
    conversation: "Conversación",
    message: "Mensaje",
    placeholder: "Escribe un mensaje…",
    send: "Enviar",
    attach: "Añadir una imagen",
    removeImage: "Quitar la imagen",
    image: "Imagen",
    typing: "Escribiendo…",
    you: "Tú",
    handoff: "Una persona te responderá aquí en breve.",
    person: "Estás hablando con una persona.",
    handedBack: "El asistente vuelve a responder.",
    closed: "Esta conversación ha terminado. Escribe para empezar una nueva.",
    error: "Lo sentimos, no se pudo enviar tu mensaje.",
    retry: "Reintentar",
    busy: "Demasiados mensajes a la vez. Espera un momento y vuelve a intentarlo.",
    unavailable: "El chat no está disponible ahora mismo. Inténtalo más tarde.",
    imageTooBig: "Esa imagen es demasiado grande (3,7 MB como máximo).",
    imageType: "Solo se pueden enviar imágenes PNG, JPEG, GIF o WebP.",
    tooManyImages: "Como máximo 4 imágenes por mensaje.",
    sources: "Fuentes",
    starters: "Preguntas sugeridas",
  },
  nl: {
    close: "Chat sluiten",
    conversation: "Gesprek",
    message: "Bericht",
    placeholder: "Typ een bericht…",
    send: "Versturen",
    attach: "Afbeelding toevoegen",
    removeImage: "Afbeelding verwijderen",
    image: "Afbeelding",
    typing: "Typt…",
    you: "U",
    handoff: "Zo meteen antwoordt hier een medewerker.",
    person: "U chat met een medewerker.",
    handedBack: "De assistent antwoordt weer.",
    closed: "Dit gesprek is beëindigd. Stuur een bericht om een nieuw gesprek te beginnen.",
    error: "Sorry, uw bericht kon niet worden verstuurd.",
    retry: "Opnieuw proberen",
    busy: "Te veel berichten tegelijk. Wacht even en probeer het opnieuw.",
    unavailable: "De chat is nu niet beschikbaar. Probeer het later opnieuw.",
    imageTooBig: "Die afbeelding is te groot (maximaal 3,7 MB).",
    imageType: "Alleen PNG-, JPEG-, GIF- of WebP-afbeeldingen kunnen worden verstuurd.",
    tooManyImages: "Maximaal 4 afbeeldingen per bericht.",
    sources: "Bronnen",
    starters: "Voorgestelde vragen",
  },
};
