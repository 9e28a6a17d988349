/**
 * Human handoff through the model engines, the stream and webhooks, over HTTP against the local
 * runtime: a chatbot that allows handoff offers the model a `request_human` tool (Bedrock Converse
 * and Chat Completions fakes record what they were sent); the model calling it ends the turn with
 * the chatbot's handoff message and the conversation in handoff. In handoff the stream names no
 * message and ends; status changes are delivered as signed webhooks.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebhookEndpoint } from "#functions/domain/webhooks";
import { webhookEventTypes } from "#functions/webhooks/events";
import {
  converseReply,
  converseStream,
  converseStreamToolUse,
  converseText,
  converseToolUse,
} from "#test/fakes/bedrock-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import {
  completionStream,
  completionStreamToolCalls,
  completionText,
  completionToolCalls,
  type FakeOpenAi,
  startFakeOpenAi,
} from "#test/fakes/openai-server";
import { openStream, type StreamEvent } from "#test/support/event-stream-client";
import {
  call,
  environment,
  isLocal,
  newConversation,
  reachable,
  seedTenant,
  type Tenant,
} from "#test/support/harness";
import { hasIdentity, manage, seedManagedTenant } from "#test/support/management";
import { bodyOf, eventually, type ReceivedDelivery, receiver, webhooksContext } from "#test/support/webhooks";

const HANDOFF_MESSAGE = "A colleague of ours will answer you here shortly.";
const FALLBACK = "Sorry, the assistant is busy. Please try again.";
const handoffAllowed = { allowed: true, message: HANDOFF_MESSAGE, phrases: ["talk to a human"] };

interface TurnAnswer {
  conversation_id: string;
  status: string;
  messages: { message_id: string; role: string; content: string }[];
}
interface HistoryMessage {
  message_id: string;
  role: string;
  content: string;
  agent_name?: string;
  status_change?: { from: string; to: string; cause: string };
}

const send = (tenant: Tenant, conversationId: string, message: string) =>
  call<TurnAnswer>("POST", "/api/message", {
    key: tenant.apiKey,
    body: { conversation_id: conversationId, message },
  });
const statusOf = async (tenant: Tenant, conversationId: string) =>
  (await call<{ status: string }>("GET", `/api/conversation/${conversationId}`, { key: tenant.apiKey })).body
    .status;
async function history(tenant: Tenant, conversationId: string): Promise<HistoryMessage[]> {
  const page = await call<{ messages: HistoryMessage[] }>(
    "GET",
    `/api/conversation/${conversationId}/messages?limit=100`,
    { key: tenant.apiKey },
  );
  return page.body.messages;
}

type ConverseRequest = {
  toolConfig?: { tools: { toolSpec?: { name: string; inputSchema?: unknown } }[] };
  messages: { role: string; content: { text?: string; toolResult?: { toolUseId: string } }[] }[];
};
const offeredTools = (request: ConverseRequest | undefined) =>
  (request?.toolConfig?.tools ?? []).map((tool) => tool.toolSpec?.name);

type CompletionRequest = { tools?: { type: string; function: { name: string } }[] };
const offeredFunctions = (request: unknown) =>
  ((request as CompletionRequest | undefined)?.tools ?? []).map((tool) => tool.function.name);

const names = (events: StreamEvent[]) => events.map((event) => event.event);
const deltaText = (events: StreamEvent[]) =>
  events
    .filter((event) => event.event === "message.delta")
    .map((event) => (event.data as { text: string }).text)
    .join("");

/** After a model-started handoff: the conversation, its history and the next (silent) turn. */
async function expectEngineHandoff(tenant: Tenant, conversationId: string, visitorText: string) {
  expect(await statusOf(tenant, conversationId)).toBe("handoff");
  const messages = await history(tenant, conversationId);
  expect(messages.map((message) => [message.role, message.content])).toEqual([
    ["user", visitorText],
    ["assistant", HANDOFF_MESSAGE],
    ["system", "Handed to a person"],
  ]);
  expect(messages[2]?.status_change).toEqual({ from: "open", to: "handoff", cause: "engine" });
  const next = await send(tenant, conversationId, "Hello? Anyone there?");
  expect(next.status).toBe(200);
  expect(next.body).toEqual({ conversation_id: conversationId, status: "handoff", messages: [] });
}

describe.runIf(isLocal)("Bedrock engine: the request_human tool", () => {
  const bedrock = () => bedrockControl(environment.bedrockControlUrl ?? "");
  const bedrockTenant = (modelId: string, handoff?: typeof handoffAllowed) =>
    seedTenant({
      chatbot: {
        engine: { kind: "bedrock", modelId },
        fallbackReply: FALLBACK,
        ...(handoff ? { handoff } : {}),
      },
    });

  it("is offered when the chatbot allows handoff; calling it answers the handoff message and hands the conversation to a person", async () => {
    // Prepare: the model asks for a person, then writes a last sentence after the tool's answer
    const modelId = `test.handoff-${randomUUID()}`;
    const shop = await bedrockTenant(modelId, handoffAllowed);
    await bedrock().script(
      modelId,
      converseToolUse([
        { toolUseId: "tooluse-h1", name: "request_human", input: { reason: "refund dispute" } },
      ]),
      converseText("I am getting a colleague for you."),
    );
    const conversationId = await newConversation(shop);
    // Act
    const turn = await send(shop, conversationId, "I want my money back, now.");
    // Assess
    expect(turn.status).toBe(200);
    expect(turn.body.status).toBe("handoff");
    expect(turn.body.messages.map((message) => [message.role, message.content])).toEqual([
      ["assistant", HANDOFF_MESSAGE],
    ]);
    const [offer, afterTool] = (await bedrock().requests(modelId)) as ConverseRequest[];
    expect(offeredTools(offer)).toContain("request_human");
    // The tool's answer went back to the model in the same turn.
    expect(JSON.stringify(afterTool?.messages.at(-1))).toContain("tooluse-h1");
    await expectEngineHandoff(shop, conversationId, "I want my money back, now.");
    // The silent turn did not call the model.
    expect(await bedrock().requests(modelId)).toHaveLength(2);
  });

  it("keeps a line the model wrote before calling it as a message of its own, as the stream stores it", async () => {
    const modelId = `test.handoff-${randomUUID()}`;
    const shop = await bedrockTenant(modelId, handoffAllowed);
    await bedrock().script(
      modelId,
      converseReply(
        [
          { text: "Let me check who can help." },
          { toolUse: { toolUseId: "tooluse-h2", name: "request_human", input: {} } },
        ],
        "tool_use",
        { inputTokens: 20, outputTokens: 12 },
      ),
      converseText("Done."),
    );
    const conversationId = await newConversation(shop);

    const turn = await send(shop, conversationId, "I need a person");

    expect(turn.status).toBe(200);
    expect(turn.body.status).toBe("handoff");
    const answered = turn.body.messages.map((message) => message.content);
    expect(answered).toEqual(["Let me check who can help.", HANDOFF_MESSAGE]);
    const stored = (await history(shop, conversationId)).filter((message) => message.role === "assistant");
    expect(stored.map((message) => message.content)).toEqual(answered);
  });

  it("is not offered when the chatbot does not allow handoff", async () => {
    const modelId = `test.handoff-${randomUUID()}`;
    const shop = await bedrockTenant(modelId);
    await bedrock().script(modelId, converseText("Happy to help."));
    const conversationId = await newConversation(shop);

    const turn = await send(shop, conversationId, "Can I talk to a human?");

    expect(turn.body).toMatchObject({ status: "open", messages: [{ content: "Happy to help." }] });
    const [request] = (await bedrock().requests(modelId)) as ConverseRequest[];
    expect(request).toBeDefined();
    expect(offeredTools(request)).not.toContain("request_human");
    expect(await statusOf(shop, conversationId)).toBe("open");
  });
});

describe.runIf(isLocal)("OpenAI-compatible engine: the request_human tool", () => {
  let openAi: FakeOpenAi;
  const secretName = `openai-handoff-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    openAi = await startFakeOpenAi();
    const directory = environment.modelSecretsDirectory ?? "";
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, secretName), `sk-test-${randomUUID()}\n`);
  });
  afterAll(async () => {
    await openAi.close();
  });

  const openAiTenant = (handoff?: typeof handoffAllowed) =>
    seedTenant({
      chatbot: {
        engine: {
          kind: "openai",
          baseUrl: `${reachable(openAi.url)}/v1`,
          model: "gpt-test",
          apiKeySecret: secretName,
        },
        fallbackReply: FALLBACK,
        ...(handoff ? { handoff } : {}),
      },
    });

  it("is offered as a function when handoff is allowed; a tool call hands the conversation to a person", async () => {
    const shop = await openAiTenant(handoffAllowed);
    openAi.enqueue(
      completionToolCalls([
        { id: "call_h1", name: "request_human", arguments: '{"reason":"asked for a person"}' },
      ]),
      completionText("One moment please."),
    );
    const conversationId = await newConversation(shop);
    const before = openAi.requests.length;

    const turn = await send(shop, conversationId, "Put me through to someone.");

    expect(turn.status).toBe(200);
    expect(turn.body.status).toBe("handoff");
    expect(turn.body.messages.map((message) => message.content)).toEqual([HANDOFF_MESSAGE]);
    const sent = openAi.requests.slice(before);
    expect(sent).toHaveLength(2);
    expect(offeredFunctions(sent[0]?.body)).toContain("request_human");
    expect(JSON.stringify(sent[1]?.body)).toContain("call_h1");
    await expectEngineHandoff(shop, conversationId, "Put me through to someone.");
    expect(openAi.requests.length - before).toBe(2);
  });

  it("keeps a line the model wrote beside its call as a message of its own", async () => {
    const shop = await openAiTenant(handoffAllowed);
    openAi.enqueue(
      completionToolCalls(
        [{ id: "call_h2", name: "request_human", arguments: "{}" }],
        { prompt_tokens: 21, completion_tokens: 12 },
        "Let me find a colleague.",
      ),
      completionText("One moment please."),
    );
    const conversationId = await newConversation(shop);

    const turn = await send(shop, conversationId, "Put me through to someone.");

    expect(turn.body.status).toBe("handoff");
    expect(turn.body.messages.map((message) => message.content)).toEqual([
      "Let me find a colleague.",
      HANDOFF_MESSAGE,
    ]);
  });

  it("is not offered when handoff is not allowed", async () => {
    const shop = await openAiTenant();
    openAi.enqueue(completionText("Sure, what do you need?"));
    const conversationId = await newConversation(shop);
    const before = openAi.requests.length;

    const turn = await send(shop, conversationId, "Can I talk to a human?");

    expect(turn.body.status).toBe("open");
    const [request] = openAi.requests.slice(before);
    expect(request).toBeDefined();
    expect(offeredFunctions(request?.body)).not.toContain("request_human");
  });
});

describe.runIf(isLocal)("the stream and handoff", () => {
  const bedrock = () => bedrockControl(environment.bedrockControlUrl ?? "");
  const stream = (tenant: Tenant, conversationId: string, message: string) =>
    openStream({ key: tenant.apiKey, body: { conversation_id: conversationId, message } });

  it("in handoff: message.start names no message, status handoff, then the stream ends; the message is stored", async () => {
    const shop = await seedTenant({ chatbot: { handoff: handoffAllowed } });
    const conversationId = await newConversation(shop);
    expect(
      (await call("POST", `/api/conversation/${conversationId}/handoff`, { key: shop.apiKey })).status,
    ).toBe(200);

    const response = await stream(shop, conversationId, "Is anybody reading this?");
    const events = await response.rest();

    expect(response.status).toBe(200);
    expect(events).toEqual([
      {
        event: "message.start",
        data: { conversation_id: conversationId, message_id: null, status: "handoff" },
      },
    ]);
    const messages = await history(shop, conversationId);
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ["system", "Handed to a person"],
      ["user", "Is anybody reading this?"],
    ]);
  });

  it("a streamed Bedrock turn whose model calls request_human streams the handoff message and hands off", async () => {
    const modelId = `test.handoff-stream-${randomUUID()}`;
    const shop = await seedTenant({
      chatbot: { engine: { kind: "bedrock", modelId }, fallbackReply: FALLBACK, handoff: handoffAllowed },
    });
    await bedrock().script(
      modelId,
      converseStreamToolUse([{ toolUseId: "tooluse-s1", name: "request_human", input: { reason: "angry" } }]),
      converseStream("Getting someone for you."),
    );
    const conversationId = await newConversation(shop);

    const response = await stream(shop, conversationId, "This is useless, get me a person.");
    const events = await response.rest();

    expect(names(events)).toEqual(["message.start", "message.delta", "message.end"]);
    expect(deltaText(events)).toBe(HANDOFF_MESSAGE);
    expect(events.at(-1)?.data).toMatchObject({ role: "assistant", content: HANDOFF_MESSAGE });
    const stored = await history(shop, conversationId);
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "system"]);
    expect(stored[1]?.content).toBe(HANDOFF_MESSAGE);
    expect(stored[2]?.status_change).toEqual({ from: "open", to: "handoff", cause: "engine" });
    expect(await statusOf(shop, conversationId)).toBe("handoff");
    // The next streamed turn is silent.
    const next = await (await stream(shop, conversationId, "Hello?")).rest();
    expect(next).toEqual([
      {
        event: "message.start",
        data: { conversation_id: conversationId, message_id: null, status: "handoff" },
      },
    ]);
  });

  it("a model that writes a line before calling request_human: the deltas still add up to the stored message", async () => {
    const modelId = `test.handoff-stream-${randomUUID()}`;
    const shop = await seedTenant({
      chatbot: { engine: { kind: "bedrock", modelId }, fallbackReply: FALLBACK, handoff: handoffAllowed },
    });
    await bedrock().script(
      modelId,
      converseStreamToolUse([{ toolUseId: "tooluse-s2", name: "request_human", input: {} }], {
        preamble: "Let me check who can help.",
      }),
      converseStream("Done."),
    );
    const conversationId = await newConversation(shop);

    const idempotencyKey = randomUUID();
    const streamTurn = () =>
      openStream({
        key: shop.apiKey,
        body: { conversation_id: conversationId, message: "I need a person" },
        headers: { "idempotency-key": idempotencyKey },
      });
    const events = await (await streamTurn()).rest();

    const ends = events.filter((event) => event.event === "message.end");
    const stored = (await history(shop, conversationId)).filter((message) => message.role === "assistant");
    expect(ends.map((event) => (event.data as { content: string }).content)).toEqual(
      stored.map((message) => message.content),
    );
    // The line the visitor already saw stays a message of its own, before the handoff message.
    expect(stored.map((message) => message.content)).toEqual(["Let me check who can help.", HANDOFF_MESSAGE]);
    // The line started while the conversation was open; the handoff message starts in handoff.
    const starts = (list: StreamEvent[]) => list.filter((event) => event.event === "message.start");
    expect(starts(events).map((event) => (event.data as { status: string }).status)).toEqual([
      "open",
      "handoff",
    ]);
    // A replay (the same Idempotency-Key) starts and ends its messages as the live stream did.
    const replayed = await (await streamTurn()).rest();
    expect(starts(replayed)).toEqual(starts(events));
    expect(replayed.filter((event) => event.event === "message.end")).toEqual(ends);
    // Each message's deltas add up to its end's content.
    let text = "";
    for (const event of events) {
      if (event.event === "message.start") text = "";
      if (event.event === "message.delta") text += (event.data as { text: string }).text;
      if (event.event === "message.end") expect(text).toBe((event.data as { content: string }).content);
    }
    expect(await statusOf(shop, conversationId)).toBe("handoff");
  });

  it("a streamed OpenAI-compatible turn whose model calls request_human streams the handoff message", async () => {
    const openAi = await startFakeOpenAi();
    try {
      const shop = await seedTenant({
        chatbot: {
          engine: { kind: "openai", baseUrl: `${reachable(openAi.url)}/v1`, model: "llama3.2" },
          fallbackReply: FALLBACK,
          handoff: handoffAllowed,
        },
      });
      openAi.enqueue(
        completionStreamToolCalls([{ id: "call_s1", name: "request_human", arguments: "{}" }]),
        completionStream("Hold on."),
      );
      const conversationId = await newConversation(shop);

      const events = await (await stream(shop, conversationId, "human please")).rest();

      expect(names(events)).toEqual(["message.start", "message.delta", "message.end"]);
      expect(deltaText(events)).toBe(HANDOFF_MESSAGE);
      expect(offeredFunctions(openAi.requests[0]?.body)).toContain("request_human");
      expect(await statusOf(shop, conversationId)).toBe("handoff");
    } finally {
      await openAi.close();
    }
  });
});

describe.runIf(isLocal && hasIdentity)("webhooks for status changes", () => {
  const allVerified = (requests: ReceivedDelivery[]) =>
    requests.every((request) => request.verified.length > 0 && request.verified.every(Boolean));

  it("delivers conversation.handoff, .resumed and .closed, signed, for a client handoff, a person's hand-back and a close; message.created shows each message as the history does", async () => {
    // Prepare
    const shop = await seedManagedTenant({ chatbot: { handoff: handoffAllowed } });
    const hook = receiver(`handoff-${randomUUID().slice(0, 8)}`);
    const created = await createWebhookEndpoint(webhooksContext(), {
      organizationId: shop.organizationId,
      url: hook.url,
      events: [...webhookEventTypes],
    });
    await hook.configure({ secrets: [created.secret] });
    const conversationId = await newConversation(shop);
    const person = { as: shop.admin.token, organization: shop.organizationId };
    // Act: the client hands off, a person hands back, the client closes
    expect(
      (await call("POST", `/api/conversation/${conversationId}/handoff`, { key: shop.apiKey })).status,
    ).toBe(200);
    const reply = await manage("POST", `/manage/conversations/${conversationId}/reply`, {
      ...person,
      body: { message: "Hello, I am looking into it." },
    });
    expect(reply.status).toBe(200);
    expect((await manage("POST", `/manage/conversations/${conversationId}/hand-back`, person)).status).toBe(
      200,
    );
    expect(
      (await call("POST", `/api/conversation/${conversationId}/close`, { key: shop.apiKey })).status,
    ).toBe(200);
    // Assess
    const statusTypes = ["conversation.handoff", "conversation.resumed", "conversation.closed"];
    const requests = await eventually(hook.requests, (list) =>
      statusTypes.every((type) => list.some((request) => bodyOf(request).type === type)),
    );
    expect(allVerified(requests)).toBe(true);
    const bodies = requests.map(bodyOf);
    const changes = bodies
      .filter((body) => statusTypes.includes(body.type))
      .sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(changes.map((body) => [body.type, body.data.status, body.data.previous_status])).toEqual([
      ["conversation.handoff", "handoff", "open"],
      ["conversation.resumed", "open", "handoff"],
      ["conversation.closed", "closed", "open"],
    ]);
    for (const body of changes)
      expect(body.data).toMatchObject({
        organization_id: shop.organizationId,
        chatbot_id: shop.chatbotId,
        conversation_id: conversationId,
      });
    // Each change's system message is announced too.
    const systemTexts = await eventually(
      async () =>
        (await hook.requests())
          .map(bodyOf)
          .filter((body) => body.type === "message.created")
          .map((body) => body.data.message as { role: string; content: string })
          .filter((message) => message.role === "system")
          .map((message) => message.content),
      (list) => list.length >= 3,
    );
    expect(systemTexts.sort()).toEqual(["Closed", "Handed back to the chatbot", "Handed to a person"]);
    // Every message.created carries the message exactly as the public history shows it: the
    // status change of a system message, the person's name on an agent's reply.
    const shown = await history(shop, conversationId);
    const announced = await eventually(
      async () =>
        (await hook.requests())
          .map(bodyOf)
          .filter((body) => body.type === "message.created")
          .map((body) => body.data.message as HistoryMessage),
      (list) => list.length >= shown.length,
    );
    const byId = new Map(announced.map((message) => [message.message_id, message]));
    expect(shown.map((message) => byId.get(message.message_id))).toEqual(shown);
    expect(shown.find((message) => message.role === "agent")).toMatchObject({
      content: "Hello, I am looking into it.",
      agent_name: expect.any(String),
    });
    expect(shown.find((message) => message.role === "system")?.status_change).toEqual({
      from: "open",
      to: "handoff",
      cause: "client",
    });
  });
});
