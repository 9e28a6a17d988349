/**
 * The table stops answering (DynamoDB Local stalled with SIGSTOP, resumed with SIGCONT):
 * - every authenticated route answers 503 `{"detail":"Service temporarily unavailable"}` with
 *   Retry-After and X-Request-Id, never the gateway's own body, long before its 30 s timeout;
 * - whatever moment the stall hits, one Idempotency-Key makes one conversation or one turn: the
 *   retry replays, completes or refuses the first attempt's work, never repeats it, even though
 *   the first attempt's writes land late, when the table resumes.
 * Runs on a runtime of its own (test/support/fault-runtime.ts): a stall would stall everyone else.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listMessages } from "#functions/domain/history";
import { calls, type TableCall } from "#test/support/dynamodb-tap";
import {
  type FaultResponse,
  type FaultRuntime,
  type FaultTenant,
  retryWhileBusy,
  startFaultRuntime,
} from "#test/support/fault-runtime";

let runtime: FaultRuntime;
beforeAll(async () => {
  runtime = await startFaultRuntime();
}, 180_000);
afterAll(async () => {
  await runtime?.stop();
});

interface Turn {
  conversation_id: string;
  messages: { message_id: string; role: string; content: string }[];
}
interface Started {
  conversation_id: string;
  contact_id: string;
}
interface History {
  messages: { message_id: string; role: string; content: string }[];
}

const UNAVAILABLE = { detail: "Service temporarily unavailable" };
/** The gateway answers 503 itself at 30 s; anything near that is a hang, not an answer. */
const GATEWAY_TIMEOUT_MS = 30_000;

function expectUnavailable(response: FaultResponse<unknown>, context = ""): void {
  expect(response.body, `${context}${response.text}`).toEqual(UNAVAILABLE);
  expect(response.status).toBe(503);
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(response.headers.get("x-request-id")).toBeTruthy();
  expect(response.elapsedMs).toBeLessThan(GATEWAY_TIMEOUT_MS - 5_000);
}

async function newConversation(tenant: FaultTenant): Promise<string> {
  const started = await runtime.call<Started>("POST", "/api/conversation", {
    key: tenant.apiKey,
    body: { chatbot_id: tenant.chatbotId },
  });
  expect(started.status, started.text).toBe(200);
  return started.body.conversation_id;
}

async function history(tenant: FaultTenant, conversationId: string): Promise<History> {
  const page = await runtime.call<History>("GET", `/api/conversation/${conversationId}/messages?limit=100`, {
    key: tenant.apiKey,
  });
  expect(page.status, page.text).toBe(200);
  return page.body;
}

/**
 * Stalls the table at `point`, sends once, resumes, waits until the first attempt's late writes
 * have landed (`landed`, when given: the case where a naive retry would do the work twice), and
 * retries with the same key until settled.
 */
async function stallThenRetry<T>(
  point: (call: TableCall) => boolean,
  send: () => Promise<FaultResponse<T>>,
  landed?: () => Promise<boolean>,
): Promise<{ first: FaultResponse<T>; final: FaultResponse<T> }> {
  const stalled = runtime.stallTableAt(point);
  let first: FaultResponse<T>;
  try {
    first = await send();
    await stalled;
  } finally {
    runtime.resumeTable();
  }
  if (landed) await eventually(landed);
  const answers = await retryWhileBusy(send);
  const final = answers.at(-1) as FaultResponse<T>;
  return { first, final };
}

async function eventually(check: () => Promise<boolean>, limitMs = 15_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("the first attempt's write never landed");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The conversation's messages of this role, read from the table (not through the API). */
async function stored(tenant: FaultTenant, conversationId: string, role: "user" | "assistant") {
  const page = await listMessages(runtime.domain, {
    organizationId: tenant.organizationId,
    conversationId,
    limit: 100,
  });
  return page.messages.filter((message) => message.role === role);
}

/** One turn: exactly one visitor message with this text, followed by exactly the replies answered. */
async function expectOneTurn(
  tenant: FaultTenant,
  conversationId: string,
  text: string,
  answer: FaultResponse<Turn>,
): Promise<void> {
  expect(answer.status, answer.text).toBe(200);
  const { messages } = await history(tenant, conversationId);
  expect(messages.filter((message) => message.role === "user" && message.content === text)).toHaveLength(1);
  expect(messages.map((message) => message.message_id)).toEqual([
    expect.any(String),
    ...answer.body.messages.map((message) => message.message_id),
  ]);
}

describe("a stalled table", () => {
  it("gets every authenticated route a 503 with Retry-After and X-Request-Id, and answers again once it resumes", async () => {
    const tenant = await runtime.seedTenant();
    const conversationId = await newConversation(tenant);

    runtime.stallTable();
    let answers: FaultResponse<unknown>[];
    let ping: FaultResponse<unknown>;
    try {
      [ping, ...answers] = await Promise.all([
        runtime.call("GET", "/ping"),
        runtime.call("GET", "/api/me", { key: tenant.apiKey }),
        runtime.call("GET", `/api/conversation/${conversationId}/messages`, { key: tenant.apiKey }),
        runtime.call("POST", "/api/conversation", {
          key: tenant.apiKey,
          body: { chatbot_id: tenant.chatbotId },
        }),
        runtime.call("POST", "/api/message", {
          key: tenant.apiKey,
          body: { conversation_id: conversationId, message: "anyone there?" },
        }),
      ]);
    } finally {
      runtime.resumeTable();
    }

    expect(ping.status).toBe(200);
    for (const answer of answers) expectUnavailable(answer);
    const me = await runtime.call("GET", "/api/me", { key: tenant.apiKey });
    expect(me.status, me.text).toBe(200);
  });

  it("gets a 503 from a route whose own table call stalls after the authorizer let the request in", async () => {
    const tenant = await runtime.seedTenant();
    const conversationId = await newConversation(tenant);
    const reads = (operation: string, sortKey: string) => (call: TableCall) =>
      call.operation === operation && call.body.includes(`"SK":{"S":"${sortKey}"}`);
    const cases: [(call: TableCall) => boolean, () => Promise<FaultResponse<unknown>>][] = [
      [reads("GetItem", "ORG"), () => runtime.call("GET", "/api/me", { key: tenant.apiKey })],
      [
        reads("GetItem", "CONV"),
        () => runtime.call("GET", `/api/conversation/${conversationId}/messages`, { key: tenant.apiKey }),
      ],
      [
        calls.createsConversation,
        () =>
          runtime.call("POST", "/api/conversation", {
            key: tenant.apiKey,
            body: { chatbot_id: tenant.chatbotId },
          }),
      ],
      [
        calls.claimsTurn,
        () =>
          runtime.call("POST", "/api/message", {
            key: tenant.apiKey,
            body: { conversation_id: conversationId, message: "hello" },
          }),
      ],
    ];
    for (const [index, [point, send]] of cases.entries()) {
      const stalled = runtime.stallTableAt(point);
      let matched: TableCall | undefined;
      void stalled.then((call) => {
        matched = call;
      });
      try {
        const answer = await send();
        // If it ever fails, say which call stalled the table, and whether that was before the answer.
        const stalledFirst = matched;
        await stalled;
        const context = `case ${index}: the table stalled at ${matched?.operation} ${matched?.body.slice(0, 240)}, ${stalledFirst ? "before" : "after"} the answer\n${runtime.log().slice(-3_000)}\n`;
        expectUnavailable(answer, context);
      } finally {
        runtime.resumeTable();
      }
    }
  });
});

/** The events of a streamed answer's text, in order: [name, data]. */
function streamEvents(text: string): [string, unknown][] {
  return text
    .split("\n\n")
    .filter((block) => block.includes("data:"))
    .map((block) => {
      const name = /^event: (.+)$/m.exec(block)?.[1] ?? "message";
      return [name, JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? "null")];
    });
}

describe("the streaming endpoint and a stalled table", () => {
  const streamTurn = (
    tenant: FaultTenant,
    conversationId: string,
    text: string,
    headers?: Record<string, string>,
  ) =>
    runtime.call<unknown>("POST", "/api/message/stream", {
      key: tenant.apiKey,
      body: { conversation_id: conversationId, message: text },
      stream: true,
      ...(headers ? { headers } : {}),
    });

  it("answers a JSON 503 before the stream starts: stalled for its own key check, or at its first call", async () => {
    const tenant = await runtime.seedTenant();
    const conversationId = await newConversation(tenant);
    for (const point of [calls.authenticates, calls.readsTurnStart, calls.claimsTurn]) {
      const stalled = runtime.stallTableAt(point);
      try {
        const answer = await streamTurn(tenant, conversationId, "anyone there?");
        await stalled;
        expectUnavailable(answer);
        expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      } finally {
        runtime.resumeTable();
      }
    }
  });

  it("says so in the stream when the reply cannot be stored, and the retry with the key gives one turn", async () => {
    const tenant = await runtime.seedTenant();
    const conversationId = await newConversation(tenant);
    const text = "hello while storing stalls";
    const key = { "idempotency-key": randomUUID() };

    const { first, final } = await stallThenRetry(
      calls.storesReply,
      () => streamTurn(tenant, conversationId, text, key),
      async () => (await stored(tenant, conversationId, "assistant")).length > 0,
    );

    expect(first.status).toBe(200);
    const events = streamEvents(first.text);
    expect(events.map(([name]) => name)).toEqual(["message.start", "message.delta", "error"]);
    expect(events[2]?.[1]).toEqual(UNAVAILABLE);
    // The reply landed once the table resumed: the retry replays it, as a stream.
    expect(final.status).toBe(200);
    expect(final.headers.get("idempotent-replayed")).toBe("true");
    const replayed = streamEvents(final.text);
    expect(replayed.map(([name]) => name)).toEqual(["message.start", "message.delta", "message.end"]);
    const { messages } = await history(tenant, conversationId);
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ["user", text],
      ["assistant", (replayed[2]?.[1] as { content?: string } | undefined)?.content],
    ]);
    expect(messages[1]?.message_id).toBe((events[0]?.[1] as { message_id?: string } | undefined)?.message_id);
  });
});

describe("one Idempotency-Key, one turn, wherever the table stalls", () => {
  /** Where the stall hits; what has landed late before the retry; what the retry then does. */
  const points: {
    moment: string;
    point: (call: TableCall) => boolean;
    landed?: "visitor message" | "reply";
    retry?: "completes the turn" | "replays";
  }[] = [
    { moment: "authenticating (before the claim)", point: calls.authenticates },
    { moment: "claiming the Idempotency-Key", point: calls.claimsIdempotencyKey },
    { moment: "reading the conversation (beside the key's claim)", point: calls.readsTurnStart },
    {
      moment: "claiming the turn number with the visitor's message",
      point: calls.claimsTurn,
      landed: "visitor message",
      retry: "completes the turn",
    },
    { moment: "storing the reply", point: calls.storesReply, landed: "reply", retry: "replays" },
  ];
  for (const { moment, point, landed, retry } of points) {
    const how = retry ? ` (the retry ${retry})` : "";
    it(`POST /api/message stalled while ${moment}: 503, then exactly one turn${how}`, async () => {
      const tenant = await runtime.seedTenant();
      const conversationId = await newConversation(tenant);
      const text = `Stalled while ${moment}`;
      const key = { "idempotency-key": randomUUID() };
      const send = () =>
        runtime.call<Turn>("POST", "/api/message", {
          key: tenant.apiKey,
          body: { conversation_id: conversationId, message: text },
          headers: key,
        });

      const { first, final } = await stallThenRetry(
        point,
        send,
        landed &&
          (async () =>
            (await stored(tenant, conversationId, landed === "reply" ? "assistant" : "user")).length > 0),
      );

      expectUnavailable(first);
      await expectOneTurn(tenant, conversationId, text, final);
      if (retry === "replays") expect(final.headers.get("idempotent-replayed")).toBe("true");
      if (retry === "completes the turn") {
        expect(final.headers.get("idempotent-replayed")).toBeNull();
        expect(runtime.log()).toContain('"message":"completing a turn an earlier attempt began"');
      }
      const again = await send();
      expect(again.body).toEqual(final.body);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      await expectOneTurn(tenant, conversationId, text, again);
    });
  }

  const conversationPoints: { moment: string; point: (call: TableCall) => boolean; landed?: boolean }[] = [
    { moment: "authenticating (before the claim)", point: calls.authenticates },
    { moment: "claiming the Idempotency-Key", point: calls.claimsIdempotencyKey },
    { moment: "creating the conversation", point: calls.createsConversation, landed: true },
  ];
  for (const { moment, point, landed } of conversationPoints) {
    const how = landed ? " (the retry replays it)" : "";
    it(`POST /api/conversation stalled while ${moment}: 503, then exactly one conversation${how}`, async () => {
      const tenant = await runtime.seedTenant();
      const externalId = `stalled-${randomUUID()}`;
      const key = { "idempotency-key": randomUUID() };
      const send = () =>
        runtime.call<Started>("POST", "/api/conversation", {
          key: tenant.apiKey,
          body: { chatbot_id: tenant.chatbotId, external_id: externalId },
          headers: key,
        });

      const { first, final } = await stallThenRetry(
        point,
        send,
        landed
          ? async () =>
              (await runtime.conversationsWithExternalId(tenant.organizationId, externalId)).length > 0
          : undefined,
      );

      expectUnavailable(first);
      expect(final.status, final.text).toBe(200);
      if (landed) expect(final.headers.get("idempotent-replayed")).toBe("true");
      expect(await runtime.conversationsWithExternalId(tenant.organizationId, externalId)).toEqual([
        final.body.conversation_id,
      ]);
    });
  }

  it("rides out a stall shorter than one call's retries, still with one turn", async () => {
    const tenant = await runtime.seedTenant();
    const conversationId = await newConversation(tenant);
    const text = "A short stall";
    const key = { "idempotency-key": randomUUID() };
    const send = () =>
      runtime.call<Turn>("POST", "/api/message", {
        key: tenant.apiKey,
        body: { conversation_id: conversationId, message: text },
        headers: key,
      });

    // Resumed after the first attempt of the reply's write timed out and while the SDK's retry of
    // it waits: both reach the table, the first one lands, the retry must be recognised as ours.
    void runtime.stallTableAt(calls.storesReply).then(() => setTimeout(() => runtime.resumeTable(), 2_500));
    const first = await send();
    const final = (await retryWhileBusy(send)).at(-1) as FaultResponse<Turn>;

    expect([200, 503]).toContain(first.status);
    await expectOneTurn(tenant, conversationId, text, final);
  });

  it("keeps one conversation or turn per key when a burst of requests is stalled at arbitrary moments", async () => {
    const tenant = await runtime.seedTenant();
    for (const delayMs of [0, 20, 60, 120, 250]) {
      const conversationIds = await Promise.all(Array.from({ length: 5 }, () => newConversation(tenant)));
      const starts = Array.from({ length: 5 }, () => ({
        externalId: `burst-${randomUUID()}`,
        key: { "idempotency-key": randomUUID() },
      }));
      const turns = conversationIds.map((conversationId) => ({
        conversationId,
        text: `burst ${delayMs} ${conversationId}`,
        key: { "idempotency-key": randomUUID() },
      }));
      const startConversation = (start: (typeof starts)[number]) => () =>
        runtime.call<Started>("POST", "/api/conversation", {
          key: tenant.apiKey,
          body: { chatbot_id: tenant.chatbotId, external_id: start.externalId },
          headers: start.key,
        });
      const sendTurn = (turn: (typeof turns)[number]) => () =>
        runtime.call<Turn>("POST", "/api/message", {
          key: tenant.apiKey,
          body: { conversation_id: turn.conversationId, message: turn.text },
          headers: turn.key,
        });

      const stall = setTimeout(() => runtime.stallTable(), delayMs);
      try {
        const firsts = await Promise.all([
          ...starts.map((start) => startConversation(start)()),
          ...turns.map((turn) => sendTurn(turn)()),
        ]);
        for (const first of firsts) expect([200, 503]).toContain(first.status);
      } finally {
        clearTimeout(stall);
        runtime.resumeTable();
      }

      for (const start of starts) {
        const final = (await retryWhileBusy(startConversation(start))).at(-1) as FaultResponse<Started>;
        expect(final.status, final.text).toBe(200);
        expect(await runtime.conversationsWithExternalId(tenant.organizationId, start.externalId)).toEqual([
          final.body.conversation_id,
        ]);
      }
      for (const turn of turns) {
        const final = (await retryWhileBusy(sendTurn(turn))).at(-1) as FaultResponse<Turn>;
        await expectOneTurn(tenant, turn.conversationId, turn.text, final);
      }
    }
  });
});
