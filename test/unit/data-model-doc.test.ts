/**
 * docs/data-model.md's entity table must match functions/store/items.ts: every key builder has a
 * row whose PK and SK, with sample values put into their `{placeholders}`, are exactly the keys the
 * builder makes, and the table has no row for a key that no longer exists.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type Key, keys, messageSortKey } from "#functions/store/items";

const doc = readFileSync(resolve(import.meta.dirname, "../../docs/data-model.md"), "utf8");

/** What each placeholder of the doc stands for in this test. */
const samples: Record<string, string> = {
  organizationId: "org-1",
  chatbotId: "bot-1",
  entryId: "entry-1",
  sourceId: "source-1",
  toolId: "tool-1",
  contactId: "contact-1",
  createdAt: "2026-11-21T12:00:00.000Z",
  term: "ann",
  conversationId: "conv-1",
  keyId: "key-1",
  "sha256(key)": "keyhash",
  "sha256(Idempotency-Key)": "idemhash",
  hash: "lookuphash",
  userId: "user-1",
  day: "2026-11-21",
  "sha256(externalId)": "exthash",
  endpointId: "endpoint-1",
  deliveryId: "delivery-1",
  signature: "signature",
  messageId: "message-1",
  name: "lookup_orders",
  address: "203.0.113.7",
  visitorId: "visitorhash",
  "sha256(sub)": "subjecthash",
  "turn:10 digits": messageSortKey(7, 1).split("#")[0] ?? "",
  "index:2 digits": messageSortKey(7, 1).split("#")[1] ?? "",
};

/** Each builder with the doc row that describes it; a new builder fails to compile until added. */
const builders: Record<keyof typeof keys, [entity: string, key: Key]> = {
  organization: ["Organization", keys.organization("org-1")],
  apiKey: ["API key", keys.apiKey("keyhash")],
  chatbot: ["Chatbot", keys.chatbot("org-1", "bot-1")],
  knowledgeEntry: ["Knowledge entry", keys.knowledgeEntry("org-1", "bot-1", "entry-1")],
  knowledgeSource: ["Knowledge source", keys.knowledgeSource("org-1", "bot-1", "source-1")],
  knowledgeTotals: ["Knowledge totals", keys.knowledgeTotals("org-1", "bot-1")],
  tool: ["Tool", keys.tool("org-1", "bot-1", "tool-1")],
  toolCount: ["Tool count", keys.toolCount("org-1", "bot-1")],
  toolName: ["Tool name", keys.toolName("org-1", "bot-1", "lookup_orders")],
  knowledgeEntryCount: ["Knowledge entry count", keys.knowledgeEntryCount("org-1", "bot-1")],
  webhookEndpointCount: ["Webhook endpoint count", keys.webhookEndpointCount("org-1")],
  toolBucket: ["Tool request bucket", keys.toolBucket("org-1", "bot-1", "tool-1")],
  contact: ["Contact", keys.contact("contact-1")],
  contactListEntry: [
    "Contact list entry",
    keys.contactListEntry("org-1", "2026-11-21T12:00:00.000Z", "contact-1"),
  ],
  contactSearchTerm: ["Contact search term", keys.contactSearchTerm("org-1", "ann", "contact-1")],
  conversation: ["Conversation", keys.conversation("org-1", "conv-1")],
  message: ["Message", keys.message("org-1", "conv-1", 7, 1)],
  toolCache: ["Look-up cache entry", keys.toolCache("org-1", "conv-1", "lookuphash")],
  idempotencyRecord: ["Idempotency record", keys.idempotencyRecord("key-1", "idemhash")],
  contactConversation: ["Contact's conversation", keys.contactConversation("org-1", "contact-1", "conv-1")],
  externalConversation: [
    "External id's conversation",
    keys.externalConversation("org-1", "exthash", "conv-1"),
  ],
  person: ["Person", keys.person("user-1")],
  membership: ["Membership", keys.membership("user-1", "org-1")],
  operatorGrant: ["Operator grant", keys.operatorGrant("user-1")],
  usage: ["Usage", keys.usage("org-1", "2026-11-21", "bot-1")],
  webhookEndpoint: ["Webhook endpoint", keys.webhookEndpoint("org-1", "endpoint-1")],
  webhookDelivery: ["Webhook delivery", keys.webhookDelivery("org-1", "endpoint-1", "delivery-1")],
  knowledgeGap: ["Knowledge gap", keys.knowledgeGap("org-1", "bot-1", "2026-11-21", "signature")],
  replyReference: ["Reply reference", keys.replyReference("org-1", "message-1")],
  analyticsDay: ["Analytics day", keys.analyticsDay("org-1", "2026-11-21")],
  chatbotAnalyticsDay: ["Chatbot analytics day", keys.chatbotAnalyticsDay("org-1", "bot-1", "2026-11-21")],
  widget: ["Widget", keys.widget("bot-1")],
  sessionBucket: ["Session bucket", keys.sessionBucket("bot-1", "203.0.113.7")],
  visitor: ["Visitor", keys.visitor("visitorhash")],
  identitySubject: ["Identity subject", keys.identitySubject("org-1", "subjecthash")],
};

/** The Entities table: entity name → its PK and SK cells, placeholders filled in. */
function documentedKeys(): Map<string, Key> {
  const section = doc.split("## Entities")[1]?.split("\n## ")[0] ?? "";
  const rows = section
    .split("\n")
    .filter((line) => line.startsWith("|"))
    .slice(2); // header and separator
  const fill = (cell: string) =>
    cell
      .trim()
      .replace(/^`|`$/g, "")
      .replace(/\{([^}]+)\}/g, (_, name: string) => {
        const value = samples[name];
        if (value === undefined) throw new Error(`no sample for the placeholder {${name}}`);
        return value;
      });
  return new Map(
    rows.map((row) => {
      const [, entity = "", pk = "", sk = ""] = row.split("|");
      return [entity.trim(), { PK: fill(pk), SK: fill(sk) }];
    }),
  );
}

describe("docs/data-model.md", () => {
  it("documents every key builder with exactly the keys it makes", () => {
    const documented = documentedKeys();
    for (const [builder, [entity, key]] of Object.entries(builders)) {
      expect([builder, documented.get(entity)]).toEqual([builder, key]);
    }
  });

  it("documents no entity the code does not have", () => {
    const known = new Set(Object.values(builders).map(([entity]) => entity));
    expect([...documentedKeys().keys()].filter((entity) => !known.has(entity))).toEqual([]);
  });
});
