/**
 * The panel's seam for small modules that add to chatbot replies or to the end of a conversation
 * (thumbs on replies and a rating at the end are meant to come this way): each registers hooks here,
 * and the panel calls them as it renders. The sources a reply drew on are shown by one such hook
 * (panel.ts), so the seam is in use from the start.
 */
import type { PanelHost } from "./host.ts";

/** A chatbot's reply as the panel has it (the stream's `message.end`, or the history). */
export interface ReplyMessage {
  message_id: string;
  role: "assistant";
  content: string;
  created_at: string;
  sources?: { source_id?: string; title?: string; url?: string | null }[];
}

export interface PanelExtension {
  /** A reply was rendered in `bubble` (once per reply, when it is complete). */
  reply?(bubble: HTMLElement, message: ReplyMessage, host: PanelHost): void;
  /** The conversation was closed (by a person, a client, or the chatbot's timeout). */
  closed?(log: HTMLElement, conversationId: string, host: PanelHost): void;
}

export const extensions: PanelExtension[] = [];
