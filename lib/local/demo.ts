/**
 * Demo data for `npm start`: one organization, one API key, one chatbot with a few knowledge
 * entries and an order look-up tool on the sample shop (the WooCommerce fake the local runtime
 * starts: order 1001 of jan.jansen@example.nl). Seeded once; later runs reuse it (the key is kept
 * in .local/demo.json, which only exists on the developer's machine, because a key is otherwise
 * shown once).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { createApiKey } from "#functions/domain/api-keys";
import { addKnowledgeEntry, createChatbot } from "#functions/domain/chatbots";
import { createOrganization, getOrganization } from "#functions/domain/organizations";
import { addTool, listTools, type ToolsContext } from "#functions/domain/tools";
import { wooDemo } from "#test/fakes/platforms/woocommerce";

export interface DemoInfo {
  baseUrl: string;
  /** Base URL of the streaming endpoint (POST {streamUrl}/api/message/stream). */
  streamUrl: string;
  apiKey: string;
  chatbotId: string;
  organizationId: string;
}

/** The sample shop's order a visitor can look up in the demo. */
export const demoOrder = { orderNumber: "1001", email: "jan.jansen@example.nl" } as const;

/** The demo chatbot's order look-up: WooCommerce on the sample shop, credentials sealed like any tool's. */
async function ensureDemoTool(ctx: ToolsContext, organizationId: string, chatbotId: string): Promise<void> {
  const tools = await listTools(ctx, organizationId, chatbotId);
  if (tools.length > 0) return;
  await addTool(ctx, {
    organizationId,
    chatbotId,
    kind: "woocommerce",
    name: "order_status",
    config: { ...wooDemo.config },
    credentials: { ...wooDemo.secrets },
  });
}

const knowledge = [
  {
    kind: "qa" as const,
    question: "How long does shipping take?",
    answer:
      "Orders ship within 1 working day; delivery in the Netherlands and Belgium takes 1–2 working days, elsewhere in the EU 3–5.",
  },
  {
    kind: "qa" as const,
    question: "Can I return my order?",
    answer:
      "Yes: you can return items within 30 days of delivery. Use the return form in your account; return shipping is free.",
  },
  {
    kind: "qa" as const,
    question: "Which payment methods do you accept?",
    answer: "We accept iDEAL, credit cards (Visa, Mastercard, American Express), PayPal and Klarna.",
  },
  {
    kind: "snippet" as const,
    title: "Customer service opening hours",
    text: "Our customer service team is available Monday to Friday from 9:00 to 17:30 and on Saturday from 10:00 to 16:00. You can reach us by chat, by e-mail at help@demo-shop.example and by phone on +31 20 123 4567.",
  },
];

export async function ensureDemo(
  ctx: ToolsContext,
  file: string,
  urls: Pick<DemoInfo, "baseUrl" | "streamUrl">,
): Promise<DemoInfo> {
  const existing = readDemo(file);
  if (existing) {
    let found = true;
    try {
      await getOrganization(ctx, existing.organizationId);
      await ensureDemoTool(ctx, existing.organizationId, existing.chatbotId);
    } catch {
      // The table was reset since: seed afresh.
      found = false;
    }
    if (found) return writeDemo(file, { ...existing, ...urls });
  }
  const organization = await createOrganization(ctx, { name: "Demo Shop" });
  const { apiKey } = await createApiKey(ctx, { organizationId: organization.organizationId, name: "demo" });
  const chatbot = await createChatbot(ctx, {
    organizationId: organization.organizationId,
    name: "Demo Shop assistant",
    welcomeMessage: "Hi! I'm the Demo Shop assistant. Ask me about shipping, returns, payment or your order.",
  });
  for (const entry of knowledge) {
    await addKnowledgeEntry(ctx, {
      organizationId: organization.organizationId,
      chatbotId: chatbot.chatbotId,
      entry,
    });
  }
  await ensureDemoTool(ctx, organization.organizationId, chatbot.chatbotId);
  return writeDemo(file, {
    ...urls,
    apiKey,
    chatbotId: chatbot.chatbotId,
    organizationId: organization.organizationId,
  });
}

function readDemo(file: string): DemoInfo | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as DemoInfo;
  } catch {
    return undefined;
  }
}

function writeDemo(file: string, info: DemoInfo): DemoInfo {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  return info;
}
