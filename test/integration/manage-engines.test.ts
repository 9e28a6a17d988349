/**
 * An admin connects the business's own model: an OpenAI-compatible server with a pasted key
 * (sealed with the stage's key, write-only: never answered, never logged), a Bedrock model from the
 * stage's list (GET /manage/engine-options), and a test of the engine before it is saved. Every
 * model call passes the outbound-address guard. Models here are the local stand-ins: an
 * OpenAI-compatible fake (reached through the test relay, as the allow list permits) and the
 * keyed Bedrock fake.
 */
import { randomUUID } from "node:crypto";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keys, records } from "#functions/store/items";
import { awsError, converseText } from "#test/fakes/bedrock-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import { completionText, type FakeOpenAi, openAiError, startFakeOpenAi } from "#test/fakes/openai-server";
import { startTrap } from "#test/support/connection-trap";
import {
  api,
  domain,
  environment,
  isLocal,
  newConversation,
  reachable,
  runtimeLog,
} from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
  seedOperator,
} from "#test/support/management";

interface Engine {
  kind: string;
  model_id?: string;
  base_url?: string;
  model?: string;
  api_key_hint?: string | null;
  api_key_secret?: string | null;
}

interface Chatbot {
  chatbot_id: string;
  engine: Engine;
}

interface EngineTest {
  ok: boolean;
  reply: string | null;
  latency_ms: number;
  error: { code: string; message: string; status: number | null } | null;
}

/** The Bedrock models the test runtime offers (BEDROCK_MODEL_IDS in test/support/global-setup.ts). */
const OFFERED = "anthropic.claude-engine-test-v1";

let home: ManagedTenant;
let other: ManagedTenant;
let openAi: FakeOpenAi;
const as = (tenant: ManagedTenant) => ({ as: tenant.admin.token, organization: tenant.organizationId });
const patch = (chatbotId: string, engine: Record<string, unknown>, tenant = home) =>
  manage<Chatbot>("PATCH", `/manage/chatbots/${chatbotId}`, { ...as(tenant), body: { engine } });
const test = (chatbotId: string, body: Record<string, unknown>, tenant = home) =>
  manage<EngineTest>("POST", `/manage/chatbots/${chatbotId}/engine/test`, { ...as(tenant), body });
const newBot = async (name = "Own model") =>
  (await manage<Chatbot>("POST", "/manage/chatbots", { ...as(home), body: { name } })).body.chatbot_id;
const storedEngine = async (chatbotId: string) => {
  const { Item } = await domain().db.client.send(
    new GetCommand({ TableName: domain().db.tableName, Key: keys.chatbot(home.organizationId, chatbotId) }),
  );
  return Item ? records.chatbot(Item).engine : undefined;
};

describe.runIf(hasIdentity && isLocal)("an admin's own model", () => {
  beforeAll(async () => {
    [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
    openAi = await startFakeOpenAi();
  });
  afterAll(async () => {
    await openAi?.close();
  });

  it("lists the stage's Bedrock models and says whether admins choose model servers", async () => {
    const options = await manage<{ bedrock_models: { model_id: string }[]; custom_model_servers: boolean }>(
      "GET",
      "/manage/engine-options",
      { as: home.viewer.token, organization: home.organizationId },
    );
    expect(options.status).toBe(200);
    expect(options.body.bedrock_models.map((model) => model.model_id)).toContain(OFFERED);
    expect(options.body.custom_model_servers).toBe(true);
  });

  it("takes a Bedrock model from the stage's list only", async () => {
    const id = await newBot();
    const offered = await patch(id, { kind: "bedrock", model_id: OFFERED });
    expect([offered.status, offered.body.engine]).toEqual([200, { kind: "bedrock", model_id: OFFERED }]);
    const unknown = await patch(id, { kind: "bedrock", model_id: "anthropic.claude-not-offered-v1" });
    expect([unknown.status, errorCode(unknown)]).toEqual([422, "invalid_argument"]);
    expect(JSON.stringify(unknown.body)).toContain('["body","engine","model_id"]');
    expect((await storedEngine(id))?.kind).toBe("bedrock");
  });

  it("seals a pasted key: answered only as a masked hint, never logged, sent to the model on each turn", async () => {
    const key = `sk-live-${randomUUID()}`;
    const id = await newBot();
    const saved = await patch(id, {
      kind: "openai",
      base_url: `${reachable(openAi.url)}/v1`,
      model: "gpt-own",
      api_key: key,
    });
    expect(saved.status).toBe(200);
    expect(saved.body.engine).toEqual({
      kind: "openai",
      base_url: `${reachable(openAi.url)}/v1`,
      model: "gpt-own",
      api_key_hint: `••••${key.slice(-4)}`,
      api_key_secret: null,
    });
    expect(saved.text).not.toContain(key);
    const read = await manage<Chatbot>("GET", `/manage/chatbots/${id}`, as(home));
    expect(read.text).not.toContain(key);
    // Stored sealed: the item holds an envelope, not the key.
    const stored = await storedEngine(id);
    expect(stored?.kind === "openai" && stored.apiKey?.startsWith("local1.")).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(key);

    openAi.enqueue(completionText("Hello from your own model."));
    const conversationId = await newConversation({ ...home, chatbotId: id });
    const reply = await api.sendMessage(home.apiKey, { conversation_id: conversationId, message: "Hi!" });
    expect(reply.body.messages[0]?.content).toBe("Hello from your own model.");
    expect(openAi.requests.at(-1)?.headers.authorization).toBe(`Bearer ${key}`);
    expect(runtimeLog()).not.toContain(key);
  });

  it("embeds the chatbot's knowledge on its own server with the pasted key, through the guard", async () => {
    const key = `sk-embed-${randomUUID()}`;
    const id = await newBot("Own model with knowledge");
    const saved = await patch(id, {
      kind: "openai",
      base_url: `${reachable(openAi.url)}/v1`,
      model: "gpt-own",
      api_key: key,
    });
    expect(saved.status).toBe(200);
    const entry = await manage("POST", `/manage/chatbots/${id}/knowledge`, {
      ...as(home),
      body: { kind: "qa", question: "How long does delivery take?", answer: "Two working days." },
    });
    expect(entry.status).toBe(201);

    openAi.enqueue(completionText("Two working days."));
    const conversationId = await newConversation({ ...home, chatbotId: id });
    const before = openAi.requests.length;
    const reply = await api.sendMessage(home.apiKey, {
      conversation_id: conversationId,
      message: "how long does delivery take?",
    });
    expect(reply.status).toBe(200);
    const sent = openAi.requests.slice(before);
    const embeddings = sent.filter((request) => request.path === "/v1/embeddings");
    expect(embeddings.length).toBeGreaterThan(0);
    for (const request of embeddings) expect(request.headers.authorization).toBe(`Bearer ${key}`);
    expect(runtimeLog()).not.toContain(key);
  });

  it("keeps the key while the server stays, drops it with a new server, removes it on null", async () => {
    const key = `sk-keep-${randomUUID()}`;
    const id = await newBot();
    const base = `${reachable(openAi.url)}/v1`;
    await patch(id, { kind: "openai", base_url: base, model: "m1", api_key: key });
    const modelOnly = await patch(id, { kind: "openai", model: "m2" });
    expect(modelOnly.body.engine).toMatchObject({
      base_url: base,
      model: "m2",
      api_key_hint: `••••${key.slice(-4)}`,
    });
    const moved = await patch(id, { kind: "openai", base_url: "https://models.example/v1", model: "m2" });
    expect(moved.body.engine).toMatchObject({ base_url: "https://models.example/v1", api_key_hint: null });
    const again = await patch(id, { kind: "openai", base_url: base, model: "m2", api_key: key });
    expect(again.body.engine.api_key_hint).toBe(`••••${key.slice(-4)}`);
    const removed = await patch(id, { kind: "openai", model: "m2", api_key: null });
    expect(removed.body.engine.api_key_hint).toBeNull();
    // Without a key the server gets no Authorization header.
    openAi.enqueue(completionText("No key needed."));
    const conversationId = await newConversation({ ...home, chatbotId: id });
    await api.sendMessage(home.apiKey, { conversation_id: conversationId, message: "Hi!" });
    expect(openAi.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it("leaves the stage's key secrets to operators, and refuses settings that cannot work", async () => {
    const id = await newBot();
    const secret = await patch(id, {
      kind: "openai",
      base_url: "https://models.example/v1",
      model: "m",
      api_key_secret: "acme",
    });
    expect([secret.status, errorCode(secret)]).toEqual([403, "forbidden"]);
    const operator = await seedOperator();
    const byOperator = await manage<Chatbot>("PATCH", `/manage/chatbots/${id}`, {
      as: operator.token,
      organization: home.organizationId,
      body: {
        engine: { kind: "openai", base_url: "https://models.example/v1", model: "m", api_key_secret: "acme" },
      },
    });
    expect(byOperator.body.engine).toMatchObject({ api_key_secret: "acme", api_key_hint: null });
    // An admin's own key replaces the operator's secret; the admin may not name a secret.
    const ownKey = await patch(id, { kind: "openai", model: "m", api_key: `sk-${randomUUID()}` });
    expect(ownKey.body.engine).toMatchObject({ api_key_secret: null });
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: "openai", base_url: "http://169.254.169.254/latest", model: "m" }, "base_url"],
      [{ kind: "openai", base_url: "http://10.0.0.7/v1", model: "m" }, "base_url"],
      [{ kind: "openai", base_url: "ftp://models.example/v1", model: "m" }, "base_url"],
      [
        { kind: "openai", base_url: "https://models.example/v1", model: "m", api_key: "has spaces in it" },
        "api_key",
      ],
      [{ kind: "openai", base_url: "https://models.example/v1", model: "m", api_key: "" }, "api_key"],
      [
        { kind: "openai", base_url: "https://models.example/v1", model: "m", api_key: "k".repeat(1001) },
        "api_key",
      ],
    ];
    for (const [engine, field] of cases) {
      const refused = await patch(id, engine);
      expect([field, refused.status, errorCode(refused)]).toEqual([field, 422, "invalid_argument"]);
      expect(JSON.stringify(refused.body)).toContain(`["body","engine","${field}"]`);
      // The value sent is never echoed (it may be a key).
      if (typeof engine.api_key === "string" && engine.api_key)
        expect(refused.text).not.toContain(engine.api_key);
    }
  });

  describe("testing the engine before saving", () => {
    it("answers with the model's reply using the key pasted for the test, and saves nothing", async () => {
      const id = await newBot();
      const key = `sk-test-${randomUUID()}`;
      openAi.enqueue(completionText("Test reply from the model."));
      const tested = await test(id, {
        engine: { kind: "openai", base_url: `${reachable(openAi.url)}/v1`, model: "gpt-own", api_key: key },
      });
      expect(tested.status).toBe(200);
      expect(tested.body).toMatchObject({ ok: true, reply: "Test reply from the model.", error: null });
      expect(openAi.requests.at(-1)?.headers.authorization).toBe(`Bearer ${key}`);
      expect((await storedEngine(id))?.kind).toBe("scripted");
      expect(runtimeLog()).not.toContain(key);
    });

    it("uses the stored key when none is pasted, and says when the server refuses a key", async () => {
      const id = await newBot();
      const key = `sk-stored-${randomUUID()}`;
      const base = `${reachable(openAi.url)}/v1`;
      await patch(id, { kind: "openai", base_url: base, model: "gpt-own", api_key: key });
      openAi.enqueue(completionText("Still me."));
      const stored = await test(id, { engine: { kind: "openai", base_url: base, model: "gpt-own" } });
      expect(stored.body.ok).toBe(true);
      expect(openAi.requests.at(-1)?.headers.authorization).toBe(`Bearer ${key}`);

      openAi.enqueue(openAiError(401, "Incorrect API key provided", "invalid_request_error"));
      const refused = await test(id, {
        engine: { kind: "openai", base_url: base, model: "gpt-own", api_key: "sk-wrong-key-123456" },
      });
      expect(refused.status).toBe(200);
      expect(refused.body).toMatchObject({
        ok: false,
        reply: null,
        error: { code: "auth_failed", status: 401 },
      });
      expect(refused.text).not.toContain("sk-wrong-key-123456");
    });

    it("tests a Bedrock model of the list through the Bedrock stand-in", async () => {
      const id = await newBot();
      const bedrock = bedrockControl(environment.bedrockControlUrl ?? "");
      await bedrock.script(OFFERED, converseText("Bedrock says hello."));
      const tested = await test(id, { engine: { kind: "bedrock", model_id: OFFERED } });
      expect(tested.body).toMatchObject({ ok: true, reply: "Bedrock says hello." });
      await bedrock.script(
        OFFERED,
        awsError(403, "AccessDeniedException", "You don't have access to the model"),
      );
      const denied = await test(id, { engine: { kind: "bedrock", model_id: OFFERED } });
      expect(denied.body).toMatchObject({ ok: false, error: { code: "auth_failed", status: 403 } });
    });

    it("never lets a model call reach a private address: the guard refuses it at connect time", async () => {
      const trap = await startTrap();
      try {
        const id = await newBot();
        // A host name (checked only when the call connects) that leads to loopback.
        const base = `http://localhost:${trap.port}/v1`;
        const tested = await test(id, {
          engine: { kind: "openai", base_url: base, model: "m", api_key: "sk-never-sent-1234" },
        });
        expect(tested.body).toMatchObject({ ok: false, error: { code: "blocked_address" } });
        const saved = await patch(id, { kind: "openai", base_url: base, model: "m" });
        expect(saved.status).toBe(200);
        const conversationId = await newConversation({ ...home, chatbotId: id });
        const reply = await api.sendMessage(home.apiKey, { conversation_id: conversationId, message: "Hi!" });
        expect(reply.status).toBe(200);
        expect(trap.connections()).toBe(0);
      } finally {
        await trap.close();
      }
    });

    it("is for admins of the chatbot's organization, and refuses bad input with a 422", async () => {
      const viewer = await manage("POST", `/manage/chatbots/${home.chatbotId}/engine/test`, {
        as: home.viewer.token,
        organization: home.organizationId,
        body: { engine: { kind: "scripted" } },
      });
      expect([viewer.status, errorCode(viewer)]).toEqual([403, "forbidden"]);
      const theirs = await test(other.chatbotId, { engine: { kind: "scripted" } });
      expect([theirs.status, errorCode(theirs)]).toEqual([404, "chatbot_not_found"]);
      for (const body of [
        {},
        { engine: { kind: "gpt" } },
        { engine: { kind: "openai" } },
        { engine: { kind: "scripted" }, message: "" },
      ]) {
        const refused = await test(home.chatbotId, body);
        expect([JSON.stringify(body), refused.status, errorCode(refused)]).toEqual([
          JSON.stringify(body),
          422,
          "invalid_argument",
        ]);
      }
    });
  });
});
