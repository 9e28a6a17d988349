/**
 * How conversation statuses and message roles read in the console, in one place: a new status
 * or a new role is one entry here, and the lists, filters, transcripts and the inbox pick it up.
 */
import type { paths } from "../api/client.ts";

type Conversation =
  paths["/manage/conversations"]["get"]["responses"][200]["content"]["application/json"]["conversations"][number];
export type ConversationStatus = Conversation["status"];
export type TranscriptMessage =
  paths["/manage/conversations/{conversation_id}"]["get"]["responses"][200]["content"]["application/json"]["messages"][number];
export type MessageRole = TranscriptMessage["role"];
export type StatusChange = NonNullable<TranscriptMessage["status_change"]>;

export const statuses: Record<
  ConversationStatus,
  { label: string; tone: "good" | "muted" | "warn"; becameLabel: string }
> = {
  open: { label: "Open", tone: "good", becameLabel: "Handed back to the chatbot" },
  handoff: { label: "With a person", tone: "warn", becameLabel: "Handed to a person" },
  closed: { label: "Closed", tone: "muted", becameLabel: "Conversation closed" },
};

/**
 * `bubble`: how the message is drawn (the visitor on the right, the organization's side on the
 * left, a person's replies apart from the chatbot's); `label`: who wrote it (the visitor by their
 * contact's name when known: `contactLabel`).
 */
export const roles: Record<
  MessageRole,
  { label: (chatbot: string, agentName: string | null, visitor: string) => string; bubble: string }
> = {
  user: { label: (_, __, visitor) => visitor, bubble: "user" },
  assistant: { label: (chatbot) => chatbot, bubble: "assistant" },
  agent: { label: (_, agentName) => `${agentName ?? "A person"} (person)`, bubble: "agent" },
  system: { label: () => "Status", bubble: "system" },
};

/** Why a status changed, as the end of a sentence ("Handed to a person …"). */
const causes: Record<StatusChange["cause"], (actor: string | null) => string> = {
  client: () => "by the client application",
  visitor: () => "at the visitor's request",
  engine: () => "by the chatbot",
  agent: (actor) => (actor ? `by ${actor}` : "by a person"),
  inactivity: () => "after inactivity",
};

/**
 * Who a conversation is with, in a word: the contact's name, else their e-mail or phone, else the
 * conversation's external id, else "Visitor" and the start of the contact id.
 */
export function contactLabel(
  conversation: Pick<Conversation, "contact" | "contact_id" | "external_id">,
): string {
  const { contact } = conversation;
  return (
    contact.user_name ??
    contact.user_email ??
    contact.user_phone ??
    conversation.external_id ??
    `Visitor ${conversation.contact_id.slice(0, 8)}`
  );
}

export const statusOf = (status: string) =>
  statuses[status as ConversationStatus] ?? {
    label: status,
    tone: "warn" as const,
    becameLabel: `Status: ${status}`,
  };

export const roleOf = (role: string) =>
  roles[role as MessageRole] ?? {
    label: () => role.charAt(0).toUpperCase() + role.slice(1),
    bubble: role,
  };

/** A status change as a sentence: "Handed to a person by Ada", "Conversation closed after inactivity". */
export function describeStatusChange(change: {
  to: string;
  cause: string;
  actor?: { name: string | null } | null;
}): string {
  const cause = causes[change.cause as StatusChange["cause"]];
  const why = cause ? cause(change.actor?.name ?? null) : `(${change.cause})`;
  return `${statusOf(change.to).becameLabel} ${why}`;
}

type ConversationAnswer =
  paths["/manage/conversations/{conversation_id}"]["get"]["responses"][200]["content"]["application/json"];

/** What became of a conversation (docs/api.md "Outcomes"). */
export const outcomeLabels: Record<ConversationAnswer["outcome"], string> = {
  resolved: "Resolved",
  handed_off: "Handed to a person",
  unresolved: "Unresolved",
  abandoned: "Abandoned (the visitor wrote nothing)",
};

/** Why it was handed to a person. */
export const handoffReasonLabels: Record<NonNullable<ConversationAnswer["handoff_reason"]>, string> = {
  visitor_asked: "the visitor asked",
  could_not_answer: "the chatbot could not answer",
  tool_failed: "a look-up failed",
  client: "an API client",
  agent: "a person took over",
};
