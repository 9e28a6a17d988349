/**
 * Demo data for `npm start`: one organization, one API key, one chatbot with a few knowledge
 * entries and an order look-up tool on the sample shop (the WooCommerce fake the local runtime
 * starts: order 1001 of jan.jansen@example.nl), and three people who sign in to the console: a
 * platform operator, an admin and a viewer of the demo organization. Seeded once; later runs reuse
 * it (the key and the passwords are kept in .local/demo.json, which only exists on the developer's
 * machine, because a key is otherwise shown once).
 */
import { randomInt } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import {
  AdminCreateUserCommand,
  AdminSetUserPasswordCommand,
  type CognitoIdentityProviderClient,
  UsernameExistsException,
} from "@aws-sdk/client-cognito-identity-provider";
import { createApiKey } from "#functions/domain/api-keys";
import { addKnowledgeEntry, createChatbot } from "#functions/domain/chatbots";
import type { DomainContext } from "#functions/domain/context";
import { createCognitoDirectory } from "#functions/domain/directory";
import { createOrganization, getOrganization } from "#functions/domain/organizations";
import { grantOperator, inviteMember } from "#functions/domain/people";
import { addTool, listTools, type ToolsContext } from "#functions/domain/tools";
import { updateWidgetSettings } from "#functions/domain/widget-settings";
import { AppError } from "#functions/errors";
import type { Role } from "#functions/store/items";
import { wooDemo } from "#test/fakes/platforms/woocommerce";

export interface DemoPeople {
  /** A platform operator. */
  operatorEmail: string;
  operatorPassword: string;
  /** An admin of the demo organization: the console's everyday user. */
  consoleEmail: string;
  consolePassword: string;
  /** A viewer of the demo organization. */
  viewerEmail: string;
  viewerPassword: string;
}

export interface DemoInfo extends Partial<DemoPeople> {
  baseUrl: string;
  /** Base URL of the streaming endpoint (POST {streamUrl}/api/message/stream). */
  streamUrl: string;
  apiKey: string;
  chatbotId: string;
  organizationId: string;
  /** Where the console signs in: the local Cognito's endpoint and the console client. */
  cognito?: { endpoint: string; region: string; userPoolId: string; clientId: string };
  /** The console's address (`npm start` serves it). */
  consoleUrl?: string;
  /** The widget's demo page: a shop page on another origin, the widget allowed there. */
  demoPageUrl?: string;
}

export interface DemoCognito {
  client: CognitoIdentityProviderClient;
  userPoolId: string;
  endpoint: string;
  clientId: string;
}

/** A password the pool's policy accepts: 20 characters of every class. */
export function demoPassword(): string {
  const classes = ["ABCDEFGHJKLMNPQRSTUVWXYZ", "abcdefghijkmnopqrstuvwxyz", "23456789", "!#%+-=?@^_"];
  const all = classes.join("");
  const chars = classes.map((chars) => chars.charAt(randomInt(chars.length)));
  while (chars.length < 20) chars.push(all.charAt(randomInt(all.length)));
  return chars.join("");
}

/** A person who can sign in with `password` at once (no first-sign-in challenge): their user id. */
async function ensureUser(cognito: DemoCognito, email: string, password: string): Promise<string> {
  try {
    await cognito.client.send(
      new AdminCreateUserCommand({
        UserPoolId: cognito.userPoolId,
        Username: email,
        UserAttributes: [
          { Name: "email", Value: email },
          { Name: "email_verified", Value: "true" },
        ],
        MessageAction: "SUPPRESS",
        TemporaryPassword: password,
      }),
    );
  } catch (error) {
    if (!(error instanceof UsernameExistsException)) throw error;
  }
  await cognito.client.send(
    new AdminSetUserPasswordCommand({
      UserPoolId: cognito.userPoolId,
      Username: email,
      Password: password,
      Permanent: true,
    }),
  );
  const found = await createCognitoDirectory(cognito.userPoolId, cognito.client).find(email);
  if (!found) throw new Error(`the demo user ${email} was not created`);
  return found.userId;
}

const ignoreConflict = (error: unknown) => {
  if (!(error instanceof AppError && error.code === "conflict")) throw error;
};

/** The operator, admin and viewer of the demo: created if missing, passwords as in the demo file. */
async function ensureDemoPeople(
  ctx: DomainContext,
  cognito: DemoCognito,
  organizationId: string,
  known: Partial<DemoPeople>,
): Promise<DemoPeople> {
  const people: DemoPeople = {
    operatorEmail: known.operatorEmail ?? "operator@demo-shop.example",
    operatorPassword: known.operatorPassword ?? demoPassword(),
    consoleEmail: known.consoleEmail ?? "admin@demo-shop.example",
    consolePassword: known.consolePassword ?? demoPassword(),
    viewerEmail: known.viewerEmail ?? "viewer@demo-shop.example",
    viewerPassword: known.viewerPassword ?? demoPassword(),
  };
  const directory = createCognitoDirectory(cognito.userPoolId, cognito.client);
  const member = async (email: string, password: string, role: Role) => {
    const userId = await ensureUser(cognito, email, password);
    await inviteMember(
      ctx,
      { find: directory.find, invite: async () => ({ userId, email, invited: false }) },
      { organizationId, email, role },
    ).catch(ignoreConflict);
  };
  const operatorId = await ensureUser(cognito, people.operatorEmail, people.operatorPassword);
  await grantOperator(ctx, { userId: operatorId, email: people.operatorEmail }).catch(ignoreConflict);
  await member(people.consoleEmail, people.consolePassword, "admin");
  await member(people.viewerEmail, people.viewerPassword, "viewer");
  return people;
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

export const demoKnowledge = [
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
  cognito: DemoCognito,
  file: string,
  urls: Pick<DemoInfo, "baseUrl" | "streamUrl">,
  consoleUrl?: string,
  demoPageUrl?: string,
): Promise<DemoInfo & DemoPeople> {
  const at = { ...(consoleUrl ? { consoleUrl } : {}), ...(demoPageUrl ? { demoPageUrl } : {}) };
  const existing = readDemo(file);
  if (existing) {
    let found = true;
    try {
      await getOrganization(ctx, existing.organizationId);
      await ensureDemoTool(ctx, existing.organizationId, existing.chatbotId);
      await ensureDemoWidget(ctx, existing.organizationId, existing.chatbotId, demoPageUrl);
    } catch {
      // The table was reset since: seed afresh.
      found = false;
    }
    if (found) {
      const people = await ensureDemoPeople(ctx, cognito, existing.organizationId, existing);
      return writeDemo(file, { ...existing, ...people, ...urls, cognito: signInAt(cognito), ...at });
    }
  }
  const organization = await createOrganization(ctx, { name: "Demo Shop" });
  const { apiKey } = await createApiKey(ctx, { organizationId: organization.organizationId, name: "demo" });
  const chatbot = await createChatbot(ctx, {
    organizationId: organization.organizationId,
    name: "Demo Shop assistant",
    welcomeMessage: "Hi! I'm the Demo Shop assistant. Ask me about shipping, returns, payment or your order.",
  });
  for (const entry of demoKnowledge) {
    await addKnowledgeEntry(ctx, {
      organizationId: organization.organizationId,
      chatbotId: chatbot.chatbotId,
      entry,
    });
  }
  await ensureDemoTool(ctx, organization.organizationId, chatbot.chatbotId);
  await ensureDemoWidget(ctx, organization.organizationId, chatbot.chatbotId, demoPageUrl);
  const people = await ensureDemoPeople(ctx, cognito, organization.organizationId, existing ?? {});
  return writeDemo(file, {
    ...urls,
    apiKey,
    chatbotId: chatbot.chatbotId,
    organizationId: organization.organizationId,
    ...people,
    cognito: signInAt(cognito),
    ...at,
  });
}

/** The demo chatbot's widget: on, for the demo page's origin (its port may change between runs). */
async function ensureDemoWidget(
  ctx: DomainContext,
  organizationId: string,
  chatbotId: string,
  demoPageUrl: string | undefined,
): Promise<void> {
  if (!demoPageUrl) return;
  await updateWidgetSettings(ctx, {
    organizationId,
    chatbotId,
    changes: {
      enabled: true,
      allowedOrigins: [new URL(demoPageUrl).origin],
      appearance: {
        title: "Demo Shop",
        starterQuestions: ["How long does shipping take?", "Can I return my order?", "Where is my order?"],
      },
    },
  });
}

const signInAt = (cognito: DemoCognito) => ({
  endpoint: cognito.endpoint,
  region: "us-east-1",
  userPoolId: cognito.userPoolId,
  clientId: cognito.clientId,
});

function readDemo(file: string): DemoInfo | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as DemoInfo;
  } catch {
    return undefined;
  }
}

function writeDemo<T extends DemoInfo>(file: string, info: T): T {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  return info;
}
