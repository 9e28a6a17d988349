/**
 * The operator CLI (`npm run admin`), run through its entry function against the suite's table:
 * organizations, keys (shown once, never listed), subscription and rate limit, chatbots and
 * knowledge, clear errors in both formats, and --help.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "#lib/admin/cli";
import { call, environment, isLocal } from "#test/support/harness";

interface Run {
  code: number;
  out: string;
  err: string;
  json<T = Record<string, unknown>>(): T;
}

/** Runs one CLI command against the suite's table (--table, and the local endpoint when local). */
async function admin(...args: string[]): Promise<Run> {
  let out = "";
  let err = "";
  const target = [
    "--table",
    environment.tableName,
    ...(environment.dynamoDbEndpoint ? ["--endpoint", environment.dynamoDbEndpoint] : []),
  ];
  const code = await runCli([...args, ...target], {
    out: (text) => {
      out += `${text}\n`;
    },
    err: (text) => {
      err += `${text}\n`;
    },
    env: { AWS_REGION: environment.region },
    localDirectory: "/nonexistent",
  });
  return { code, out, err, json: <T>() => JSON.parse(out) as T };
}

beforeAll(() => {
  // DynamoDB Local takes any credentials; a deployed stage uses the environment's.
  if (isLocal) {
    process.env.AWS_ACCESS_KEY_ID ??= "local";
    process.env.AWS_SECRET_ACCESS_KEY ??= "local";
  }
});

describe("npm run admin", () => {
  it("sets up an organization, a key and a chatbot that then serve the API", async () => {
    const org = (
      await admin("organizations", "create", "--name", "CLI Shop", "--rate-limit", "42", "--json")
    ).json<{
      organizationId: string;
      rateLimit: number;
    }>();
    expect(org.rateLimit).toBe(42);

    const key = (
      await admin("keys", "create", "--org", org.organizationId, "--name", "site", "--json")
    ).json<{
      apiKey: string;
      keyId: string;
      prefix: string;
    }>();
    expect(key.apiKey).toMatch(/^cbk_/);
    expect(key.prefix).toBe(`${key.apiKey.slice(0, 10)}…`);

    const bot = (
      await admin(
        "chatbots",
        "create",
        "--org",
        org.organizationId,
        "--name",
        "CLI bot",
        "--fallback-reply",
        "No idea, sorry.",
        "--json",
      )
    ).json<{ chatbotId: string; engine: { kind: string } }>();
    expect(bot.engine).toEqual({ kind: "scripted" });
    const added = await admin(
      "knowledge",
      "add",
      "--org",
      org.organizationId,
      "--chatbot",
      bot.chatbotId,
      "--question",
      "Do you ship to Norway?",
      "--answer",
      "Yes, within five working days.",
    );
    expect(added.code).toBe(0);

    const me = await call("GET", "/api/me", { key: key.apiKey });
    expect(me.body).toMatchObject({
      organization_name: "CLI Shop",
      key_id: key.keyId,
      rate_limit: { limit: 42 },
    });
    const conversation = await call<{ conversation_id: string }>("POST", "/api/conversation", {
      key: key.apiKey,
      body: { chatbot_id: bot.chatbotId },
    });
    const reply = await call<{ messages: { content: string }[] }>("POST", "/api/message", {
      key: key.apiKey,
      body: { conversation_id: conversation.body.conversation_id, message: "shipping to norway?" },
    });
    expect(reply.body.messages[0]?.content).toBe("Yes, within five working days.");

    const listed = await admin("keys", "list", "--org", org.organizationId, "--json");
    expect(listed.out).not.toContain(key.apiKey);
    expect(listed.json<{ keyId: string }[]>().map((entry) => entry.keyId)).toEqual([key.keyId]);

    await admin("organizations", "update", org.organizationId, "--subscription", "inactive");
    expect((await call("GET", "/api/me", { key: key.apiKey })).status).toBe(403);

    await admin(
      "organizations",
      "update",
      org.organizationId,
      "--subscription",
      "active",
      "--rate-limit",
      "7",
    );
    expect((await call("GET", "/api/me", { key: key.apiKey })).headers.get("x-ratelimit-limit")).toBe("7");

    const revoked = (await admin("keys", "revoke", "--org", org.organizationId, key.keyId, "--json")).json<{
      revokedAt: string;
    }>();
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect((await call("GET", "/api/me", { key: key.apiKey })).status).toBe(401);
  });

  it("points a chatbot at an OpenAI-compatible model with one command", async () => {
    const org = (await admin("organizations", "create", "--name", "Model Shop", "--json")).json<{
      organizationId: string;
    }>();
    const bot = (
      await admin("chatbots", "create", "--org", org.organizationId, "--name", "bot", "--json")
    ).json<{ chatbotId: string }>();

    const updated = await admin(
      "chatbots",
      "update",
      "--org",
      org.organizationId,
      bot.chatbotId,
      "--engine",
      "openai",
      "--base-url",
      "http://localhost:11434/v1",
      "--model",
      "llama3.2",
      "--api-key-secret",
      "ollama",
      "--json",
    );

    expect(updated.json()).toMatchObject({
      engine: {
        kind: "openai",
        baseUrl: "http://localhost:11434/v1",
        model: "llama3.2",
        apiKeySecret: "ollama",
      },
    });
  });

  it("explains mistakes clearly, in Format A with --json", async () => {
    const missing = await admin("keys", "create", "--json");
    const unknownOrg = await admin("keys", "list", "--org", "nope");
    const badLimit = await admin("organizations", "create", "--name", "x", "--rate-limit", "0", "--json");
    const unknownCommand = await admin("keys", "rotate");
    const unknownOption = await admin("keys", "list", "--organisation", "x");

    expect(missing.code).toBe(1);
    expect(missing.json()).toEqual({
      error: { code: "invalid_argument", message: "--org is required", details: {} },
    });
    expect(unknownOrg.code).toBe(0);
    expect(unknownOrg.out.trim()).toBe("(none)");
    expect(badLimit.json()).toMatchObject({ error: { code: "invalid_argument" } });
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.err).toContain("Unknown command: keys rotate");
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.err).toContain("--organisation");
  });

  it("prints help for everything and for one command", async () => {
    let out = "";
    const io = {
      out: (text: string) => (out += text),
      err: () => undefined,
      env: {},
      localDirectory: "/nonexistent",
    };
    expect(await runCli(["--help"], io)).toBe(0);
    expect(out).toContain("keys create");
    out = "";
    expect(await runCli(["keys", "create", "--help"], io)).toBe(0);
    expect(out).toContain("--expires-in-days");
  });

  it("asks for a table when no local runtime is running", async () => {
    let err = "";
    const code = await runCli(["organizations", "list"], {
      out: () => undefined,
      err: (text) => {
        err += text;
      },
      env: {},
      localDirectory: "/nonexistent",
    });
    expect(code).toBe(1);
    expect(err).toContain("npm start");
  });
});
