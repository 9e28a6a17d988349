/**
 * The operator CLI, run as its own process exactly as `npm run admin` runs it (tsx bin/admin.ts), against
 * the suite's table: organizations, keys (shown once, never listed), subscription and rate limit,
 * chatbots and knowledge, an OpenAI-compatible model with and without a key, `--help` for every group
 * and command, and the exit codes README promises: 0 done, 1 the command failed, 2 usage error.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commands, runCli } from "#lib/admin/cli";
import { completionText, type FakeOpenAi, startFakeOpenAi } from "#test/fakes/openai-server";
import { api, call, environment, isLocal, newConversation, reachable } from "#test/support/harness";

const root = resolve(import.meta.dirname, "../..");

interface Run {
  code: number | null;
  out: string;
  err: string;
  json<T = Record<string, unknown>>(): T;
}

/** Runs the CLI as a process: `command` (default: tsx bin/admin.ts, what `npm run admin` runs) + args. */
function runProcess(args: string[], command = [resolve(root, "node_modules/.bin/tsx"), "bin/admin.ts"]) {
  return new Promise<Run>((resolveRun, reject) => {
    const [file = "", ...prefix] = command;
    const child = spawn(file, [...prefix, ...args], {
      cwd: root,
      env: {
        ...process.env,
        AWS_REGION: environment.region,
        // DynamoDB Local takes any credentials; a deployed stage uses the environment's.
        ...(isLocal ? { AWS_ACCESS_KEY_ID: "local", AWS_SECRET_ACCESS_KEY: "local" } : {}),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolveRun({ code, out, err, json: <T>() => JSON.parse(out) as T }));
  });
}

/** The suite's table, for commands that use one. */
const target = () => [
  "--table",
  environment.tableName,
  ...(environment.dynamoDbEndpoint ? ["--endpoint", environment.dynamoDbEndpoint] : []),
];

/** Runs one CLI command against the suite's table. */
function admin(...args: string[]): Promise<Run> {
  return runProcess([...args, ...target()]);
}

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

  it("answers --help for everything, every group and every command, with exit code 0", async () => {
    const groups = [...new Set(commands.map((command) => command.group))];
    const asks = [
      ["--help"],
      ["-h"],
      ["help"],
      ["help", "knowledge", "add"],
      ...groups.map((group) => [group, "--help"]),
      ...commands.map((command) => [command.group, command.name, "--help"]),
      // --help wins over anything else given, even what would be a usage error.
      ["keys", "create", "-h", "--no-such-option"],
    ];

    const runs = await inBatches(asks, (args) => runProcess(args));

    for (const [index, run] of runs.entries()) {
      const args = asks[index] ?? [];
      expect({ args, code: run.code, err: run.err }).toEqual({ args, code: 0, err: "" });
      const [group, name] = args.filter((arg) => !arg.startsWith("-") && arg !== "help");
      if (name) expect(run.out).toContain(`Usage: npm run admin -- ${group} ${name}`);
      else if (group) {
        expect(run.out).toContain(`Usage: npm run admin -- ${group} <command>`);
        for (const command of commands.filter((candidate) => candidate.group === group))
          expect(run.out).toContain(`${group} ${command.name}`);
      } else expect(run.out).toContain("Usage: npm run admin -- <group> <command>");
    }
    // Forty-odd CLI processes: on a loaded runner they need more than the default minute.
  }, 240_000);

  it("exits 2 with a clear message for usage errors, in Format A with --json", async () => {
    const noCommand = await runProcess([]);
    const unknownGroup = await admin("teams", "list");
    const missingCommand = await admin("knowledge");
    const unknownCommand = await admin("keys", "rotate");
    const unknownOption = await admin("keys", "list", "--organisation", "x");
    const missingOption = await admin("keys", "create", "--json");
    const missingPositional = await admin("organizations", "show");
    const notANumber = await admin("organizations", "create", "--name", "x", "--rate-limit", "lots");
    const badChoice = await admin("organizations", "create", "--name", "x", "--subscription", "maybe");
    const badEngine = await admin("chatbots", "create", "--org", "o", "--name", "b", "--engine", "gpt");
    const outOfRange = await admin("organizations", "create", "--name", "x", "--rate-limit", "0", "--json");

    expect(noCommand).toMatchObject({ code: 2, out: "" });
    expect(noCommand.err).toContain("Usage: npm run admin -- <group> <command>");
    expect(unknownGroup).toMatchObject({ code: 2, out: "" });
    expect(unknownGroup.err).toContain("Unknown command group: teams");
    expect(missingCommand).toMatchObject({ code: 2, out: "" });
    expect(missingCommand.err).toContain("Missing command: npm run admin -- knowledge <command>");
    expect(missingCommand.err).toContain("knowledge add");
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.err).toContain("Unknown command: keys rotate");
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.err).toContain("--organisation");
    expect(missingOption.code).toBe(2);
    expect(missingOption.json()).toEqual({
      error: { code: "invalid_argument", message: "--org is required", details: {} },
    });
    expect(missingPositional.code).toBe(2);
    expect(missingPositional.err).toContain("<organizationId> is required");
    expect(notANumber.code).toBe(2);
    expect(notANumber.err).toContain("--rate-limit must be a number");
    expect(badChoice.code).toBe(2);
    expect(badChoice.err).toContain("--subscription must be active or inactive");
    expect(badEngine.code).toBe(2);
    expect(badEngine.err).toContain("--engine must be scripted, bedrock or openai");
    expect(outOfRange.code).toBe(2);
    expect(outOfRange.json()).toMatchObject({ error: { code: "invalid_argument" } });
    for (const run of [missingOption, missingPositional, notANumber, badChoice])
      expect(`${run.out}${run.err}`).not.toContain("at ");
  });

  it("exits 1 when a well-formed command fails, and npm run passes the exit code on", async () => {
    const unknownOrganization = await admin("organizations", "show", randomUUID());
    const unknownOrganizationJson = await admin("organizations", "show", randomUUID(), "--json");
    const viaNpm = await runProcess(
      ["run", "--silent", "admin", "--", "organizations", "show", randomUUID(), ...target()],
      ["npm"],
    );
    const usageViaNpm = await runProcess(["run", "--silent", "admin", "--", "keys", "rotate"], ["npm"]);

    expect(unknownOrganization.code).toBe(1);
    expect(unknownOrganization.err).toContain("Error (organization_not_found)");
    expect(unknownOrganizationJson.code).toBe(1);
    expect(unknownOrganizationJson.json()).toMatchObject({ error: { code: "organization_not_found" } });
    expect(viaNpm.code).toBe(1);
    expect(usageViaNpm.code).toBe(2);
  });

  it("asks for a table (a usage error) when none is given and no local runtime is running", async () => {
    let err = "";
    const code = await runCli(["organizations", "list"], {
      out: () => undefined,
      err: (text) => {
        err += text;
      },
      env: {},
      localDirectory: "/nonexistent",
    });
    expect(code).toBe(2);
    expect(err).toContain("npm start");
  });

  it("sets a chatbot's handoff and inactivity timeout, which then act on a turn, and clears them", async () => {
    const org = (await admin("organizations", "create", "--name", "Handoff Shop", "--json")).json<{
      organizationId: string;
    }>();
    const key = (await admin("keys", "create", "--org", org.organizationId, "--json")).json<{
      apiKey: string;
    }>();
    const created = await admin(
      "chatbots",
      "create",
      "--org",
      org.organizationId,
      "--name",
      "desk",
      "--handoff",
      "--handoff-message",
      "A colleague takes over now.",
      "--handoff-phrase",
      "speak to a human",
      "--handoff-phrase",
      "real person",
      "--inactivity-timeout",
      "90",
      "--json",
    );
    expect(created.code, created.err).toBe(0);
    const bot = created.json<{ chatbotId: string }>();
    expect(bot).toMatchObject({
      handoff: {
        allowed: true,
        message: "A colleague takes over now.",
        phrases: ["speak to a human", "real person"],
      },
      inactivityTimeoutMinutes: 90,
    });

    const conversationId = await newConversation({
      organizationId: org.organizationId,
      apiKey: key.apiKey,
      keyId: "",
      chatbotId: bot.chatbotId,
    });
    const turn = await api.sendMessage(key.apiKey, {
      conversation_id: conversationId,
      message: "Can I talk to a REAL PERSON?",
    });
    expect(turn.status, turn.text).toBe(200);
    expect(turn.body).toMatchObject({
      status: "handoff",
      messages: [{ role: "assistant", content: "A colleague takes over now." }],
    });

    const update = (...args: string[]) =>
      admin("chatbots", "update", "--org", org.organizationId, bot.chatbotId, ...args, "--json");
    const cleared = await update("--no-handoff", "--no-handoff-phrases", "--no-inactivity-timeout");
    expect(cleared.code, cleared.err).toBe(0);
    expect(cleared.json()).toMatchObject({
      handoff: { allowed: false, message: "A colleague takes over now.", phrases: [] },
    });
    expect(cleared.json()).not.toHaveProperty("inactivityTimeoutMinutes");
    const both = await update("--handoff", "--no-handoff");
    const outOfRange = await update("--inactivity-timeout", "0");
    expect(both.code).toBe(2);
    expect(both.json()).toMatchObject({ error: { code: "invalid_argument" } });
    expect(outOfRange.code).toBe(2);
    expect(outOfRange.json()).toMatchObject({ error: { code: "invalid_argument" } });
  });
});

describe.runIf(isLocal)("an OpenAI-compatible model that needs no key (e.g. Ollama)", () => {
  let model: FakeOpenAi;
  beforeAll(async () => {
    model = await startFakeOpenAi();
  });
  afterAll(async () => {
    await model.close();
  });

  it("is set up without --api-key-secret, and no Authorization header is sent to it", async () => {
    const org = (await admin("organizations", "create", "--name", "Ollama Shop", "--json")).json<{
      organizationId: string;
    }>();
    const key = (await admin("keys", "create", "--org", org.organizationId, "--json")).json<{
      apiKey: string;
    }>();
    const bot = (
      await admin(
        "chatbots",
        "create",
        "--org",
        org.organizationId,
        "--name",
        "local model",
        "--engine",
        "openai",
        "--base-url",
        `${reachable(model.url)}/v1`,
        "--model",
        "llama3.2",
        "--fallback-reply",
        "Fallback, not the model.",
        "--json",
      )
    ).json<{ chatbotId: string; engine: Record<string, unknown> }>();
    model.enqueue(completionText("Hello from the local model."));

    const conversationId = await newConversation({
      organizationId: org.organizationId,
      apiKey: key.apiKey,
      keyId: "",
      chatbotId: bot.chatbotId,
    });
    const reply = await api.sendMessage(key.apiKey, { conversation_id: conversationId, message: "Hi!" });

    expect(bot.engine).toEqual({ kind: "openai", baseUrl: `${reachable(model.url)}/v1`, model: "llama3.2" });
    expect(reply.body.messages[0]?.content).toBe("Hello from the local model.");
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("drops a configured key with --no-api-key, and when the base URL moves to another server", async () => {
    const org = (await admin("organizations", "create", "--name", "Moving Shop", "--json")).json<{
      organizationId: string;
    }>();
    const bot = (
      await admin("chatbots", "create", "--org", org.organizationId, "--name", "bot", "--json")
    ).json<{ chatbotId: string }>();
    const update = (...args: string[]) =>
      admin("chatbots", "update", "--org", org.organizationId, bot.chatbotId, ...args, "--json");

    const keyed = await update(
      "--engine",
      "openai",
      "--base-url",
      "https://api.openai.com/v1",
      "--model",
      "gpt-4o-mini",
      "--api-key-secret",
      "acme-openai",
    );
    const sameServer = await update("--engine", "openai", "--model", "gpt-4o");
    const keyDropped = await update("--engine", "openai", "--no-api-key");
    await update("--engine", "openai", "--api-key-secret", "acme-openai");
    const moved = await update("--engine", "openai", "--base-url", "http://localhost:11434/v1");
    const conflicting = await update("--engine", "openai", "--no-api-key", "--api-key-secret", "x");

    expect(keyed.json()).toMatchObject({ engine: { apiKeySecret: "acme-openai" } });
    expect(sameServer.json()).toMatchObject({ engine: { model: "gpt-4o", apiKeySecret: "acme-openai" } });
    expect(keyDropped.json<{ engine: object }>().engine).not.toHaveProperty("apiKeySecret");
    expect(moved.json<{ engine: object }>().engine).toEqual({
      kind: "openai",
      baseUrl: "http://localhost:11434/v1",
      model: "gpt-4o",
    });
    expect(conflicting.code).toBe(2);
  });
});

/** Runs `run` over `items`, a few at a time (the machine is shared; every run is a process). */
async function inBatches<T, R>(items: readonly T[], run: (item: T) => Promise<R>, size = 4): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    results.push(...(await Promise.all(items.slice(start, start + size).map(run))));
  }
  return results;
}
