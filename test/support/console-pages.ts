/**
 * Every page of the console, as the layout test (test/browser/layout.test.ts) visits it at 1280
 * and 375 px: its name (the screenshots are docs/screenshots/pages/<name>-<width>.png), its path,
 * and the heading that shows it is open. A new page is one line here.
 */
import type { Demo } from "#test/support/browser";

/** What the layout test seeds before its visits, for pages that show one thing. */
export interface Seeded {
  demo: Demo;
  /** The demo chatbot's name (its page's heading). */
  chatbotName: string;
  /** A conversation with a few turns. */
  conversationId: string;
  /** A conversation waiting for a person. */
  waitingConversationId: string;
  /** A webhook endpoint with deliveries. */
  webhookEndpointId: string;
  /** A contact with a name, an e-mail, a phone and a conversation. */
  contactId: string;
}

export interface ConsolePageVisit {
  name: string;
  path: string;
  heading: string | RegExp;
  /** Who opens it: the demo admin (default), or a platform operator. */
  as?: "admin" | "operator";
}

export const consolePages = ({
  demo,
  chatbotName,
  conversationId,
  waitingConversationId,
  webhookEndpointId,
  contactId,
}: Seeded): ConsolePageVisit[] => [
  { name: "overview", path: "/", heading: "Overview" },
  { name: "analytics", path: "/analytics", heading: "Analytics" },
  { name: "inbox", path: `/inbox?conversation=${waitingConversationId}`, heading: "Inbox" },
  { name: "conversations", path: "/conversations", heading: "Conversations" },
  { name: "conversation", path: `/conversations/${conversationId}`, heading: "Conversation" },
  { name: "contacts", path: "/contacts", heading: "Contacts" },
  { name: "contact", path: `/contacts/${contactId}`, heading: "Ada Lovelace" },
  { name: "chatbots", path: "/chatbots", heading: "Chatbots" },
  { name: "chatbot-new", path: "/chatbots/new", heading: "New chatbot" },
  { name: "chatbot-settings", path: `/chatbots/${demo.chatbotId}`, heading: chatbotName },
  { name: "chatbot-knowledge", path: `/chatbots/${demo.chatbotId}/knowledge`, heading: chatbotName },
  { name: "chatbot-tools", path: `/chatbots/${demo.chatbotId}/tools`, heading: chatbotName },
  { name: "chatbot-try", path: `/chatbots/${demo.chatbotId}/try`, heading: chatbotName },
  { name: "tools", path: "/tools", heading: "Tools" },
  { name: "webhooks", path: "/webhooks", heading: "Webhooks" },
  { name: "webhook-endpoint", path: `/webhooks/${webhookEndpointId}`, heading: "Webhook endpoint" },
  { name: "members", path: "/members", heading: "Members" },
  { name: "settings-api", path: "/settings/api", heading: "Settings → API" },
  { name: "organizations", path: "/organizations", heading: "Organizations", as: "operator" },
];

/** The pages shown signed out. */
export const signedOutPages: ConsolePageVisit[] = [
  { name: "sign-in", path: "/sign-in", heading: "Sign in" },
  { name: "forgot-password", path: "/forgot-password", heading: "Reset your password" },
];
