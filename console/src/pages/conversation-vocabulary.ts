/**
 * How conversation statuses and message roles read in the console, in one place: a new status
 * (e.g. a handoff to a person) or a new role (a human agent, a system note) is one entry here, and
 * the lists, filters and transcripts pick it up.
 */
import type { paths } from "../api/client.ts";

type Conversation =
  paths["/manage/conversations"]["get"]["responses"][200]["content"]["application/json"]["conversations"][number];
export type ConversationStatus = Conversation["status"];
type TranscriptMessage =
  paths["/manage/conversations/{conversation_id}"]["get"]["responses"][200]["content"]["application/json"]["messages"][number];
export type MessageRole = TranscriptMessage["role"];

export const statuses: Record<
  ConversationStatus,
  { label: string; tone: "good" | "muted" | "warn"; becameLabel: string }
> = {
  open: { label: "Open", tone: "good", becameLabel: "Handed back to the chatbot" },
  handoff: { label: "With a person", tone: "warn", becameLabel: "Handed to a person" },
  closed: { label: "Closed", tone: "muted", becameLabel: "Conversation closed" },
};

/** `side`: where the bubble sits (the visitor on the right, the organization's side on the left). */
export const roles: Record<MessageRole, { label: (chatbot: string) => string; bubble: string }> = {
  user: { label: () => "Visitor", bubble: "user" },
  assistant: { label: (chatbot) => chatbot, bubble: "assistant" },
  agent: { label: () => "Agent", bubble: "assistant" },
  system: { label: () => "Status", bubble: "system" },
};

export const statusOf = (status: string) =>
  statuses[status as ConversationStatus] ?? {
    label: status,
    tone: "warn" as const,
    becameLabel: `Status: ${status}`,
  };

export const roleOf = (role: string) =>
  roles[role as MessageRole] ?? { label: () => role.charAt(0).toUpperCase() + role.slice(1), bubble: role };
