/**
 * Feedback, ratings, outcomes and analytics over HTTP against the local runtime (contract §14):
 * thumbs on a chatbot reply and a 1–5 rating of a conversation (given, replaced, refused), shown in
 * the history and the transcript, delivered as signed `message.feedback` / `conversation.rated`
 * webhooks; every conversation's `outcome` by the documented rules (docs/api.md "Outcomes"), its
 * window (a write after it, made with a clock 25 hours ahead, finds the outcome frozen); and
 * `GET /manage/analytics` checked figure by figure after driving conversations through each outcome,
 * with the console's Try it conversations never counted.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { giveFeedback, rateConversation } from "#functions/domain/feedback";
import { OUTCOME_WINDOW_MS } from "#functions/domain/outcomes";
import { createWebhookEndpoint } from "#functions/domain/webhooks";
import { converseText, converseToolUse } from "#test/fakes/bedrock-server";
import { bedrockControl } from "#test/fakes/keyed-bedrock";
import {
  api,
  call,
  domain,
  environment,
  isLocal,
  newConversation,
  seedTenant,
  type Tenant,
} from "#test/support/harness";
import { hasIdentity, type ManagedTenant, manage, seedManagedTenant } from "#test/support/management";
import { bodyOf, eventually, receiver, webhooksContext } from "#test/support/webhooks";

const QUESTION = "How long does shipping take?";
const ANSWER = "Two working days.";
const UNKNOWN = "Zorblax quintessence fnord?";
const HANDOFF_MESSAGE = "A colleague will take it from here.";
const knowledge = [{ question: QUESTION, answer: ANSWER }];
const handoff = { allowed: true, message: HANDOFF_MESSAGE, phrases: ["talk to a human"] };

interface Feedback {
  rating: "up" | "down";
  comment: string | null;
  given_at: string;
}
interface Rating {
  score: number;
  comment: string | null;
  rated_at: string;
}
interface Outcome {
  outcome: string;
  outcome_final: boolean;
  outcome_final_at: string;
  handoff_reason: string | null;
  rating: Rating | null;
}
interface HistoryMessage {
  message_id: string;
  role: string;
  content: string;
  created_at: string;
  feedback: Feedback | null;
}

async function ask(tenant: Tenant, conversationId: string, message: string) {
  const response = await api.sendMessage(tenant.apiKey, { conversation_id: conversationId, message });
  expect(response.status, response.text).toBe(200);
  return response.body;
}
const feedback = (tenant: Tenant, messageId: string, body: unknown, key = tenant.apiKey) =>
  call<Feedback & { message_id: string; conversation_id: string }>(
    "POST",
    `/api/message/${messageId}/feedback`,
    { key, body },
  );
const rate = (tenant: Tenant, conversationId: string, body: unknown, key = tenant.apiKey) =>
  call<Rating & { conversation_id: string }>("POST", `/api/conversation/${conversationId}/rating`, {
    key,
    body,
  });
const conversation = async (tenant: Tenant, conversationId: string) => {
  const response = await call<Outcome & { status: string }>("GET", `/api/conversation/${conversationId}`, {
    key: tenant.apiKey,
  });
  expect(response.status, response.text).toBe(200);
  return response.body;
};
const history = async (tenant: Tenant, conversationId: string) => {
  const response = await call<{ rating: Rating | null; messages: HistoryMessage[] }>(
    "GET",
    `/api/conversation/${conversationId}/messages?limit=100`,
    { key: tenant.apiKey },
  );
  expect(response.status, response.text).toBe(200);
  return response.body;
};

describe.runIf(isLocal)("feedback on a reply", () => {
  it("is given, replaced, and shown in the history; only on a chatbot reply of the caller's organization", async () => {
    const [shop, other] = await Promise.all([seedTenant({ knowledge }), seedTenant({ knowledge })]);
    const id = await newConversation(shop);
    const turn = await ask(shop, id, QUESTION);
    const reply = turn.messages.at(-1);
    expect(reply?.content).toContain(ANSWER);
    const replyId = reply?.message_id ?? "";

    const up = await feedback(shop, replyId, { rating: "up", comment: "Quick and clear" });
    expect(up.status, up.text).toBe(200);
    expect(up.body).toMatchObject({
      message_id: replyId,
      conversation_id: id,
      rating: "up",
      comment: "Quick and clear",
    });
    expect(Number.isNaN(Date.parse(up.body.given_at))).toBe(false);

    const down = await feedback(shop, replyId, { rating: "down" });
    expect(down.status, down.text).toBe(200);
    expect(down.body).toMatchObject({ rating: "down", comment: null });

    const messages = (await history(shop, id)).messages;
    const shown = messages.find((message) => message.message_id === replyId);
    expect(shown?.feedback).toEqual({ rating: "down", comment: null, given_at: down.body.given_at });
    const visitorMessage = messages.find((message) => message.role === "user");
    expect(visitorMessage?.feedback).toBeNull();

    // The visitor's own message, another organization's reply, an unknown id: not found.
    for (const refused of [
      await feedback(shop, visitorMessage?.message_id ?? "", { rating: "up" }),
      await feedback(other, replyId, { rating: "up" }),
      await feedback(shop, "00000000-0000-4000-8000-000000000000", { rating: "up" }),
    ]) {
      expect(refused.status).toBe(404);
      expect(refused.body).toEqual({ detail: "Message not found" });
    }
    expect((await feedback(shop, replyId, { rating: "meh" })).status).toBe(422);
    expect((await feedback(shop, replyId, {})).status).toBe(422);
    expect((await feedback(shop, "not-a-uuid", { rating: "up" })).status).toBe(422);
    expect((await feedback(shop, replyId, { rating: "up", comment: "x".repeat(2_001) })).status).toBe(422);
    expect((await feedback(shop, replyId, { rating: "up" }, "cb_live_nope")).status).toBe(401);
  });
});

describe.runIf(isLocal)("a conversation's rating", () => {
  it("is given 1–5, replaced, shown on the conversation and its history; refused out of range or elsewhere", async () => {
    const [shop, other] = await Promise.all([seedTenant({ knowledge }), seedTenant()]);
    const id = await newConversation(shop);
    await ask(shop, id, QUESTION);
    const first = await rate(shop, id, { score: 2, comment: "Slow" });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ conversation_id: id, score: 2, comment: "Slow" });
    const again = await rate(shop, id, { score: 5 });
    expect(again.status, again.text).toBe(200);
    const expected = { score: 5, comment: null, rated_at: again.body.rated_at };
    expect((await conversation(shop, id)).rating).toEqual(expected);
    expect((await history(shop, id)).rating).toEqual(expected);
    for (const score of [0, 6, 4.5, "5"]) expect((await rate(shop, id, { score })).status).toBe(422);
    const elsewhere = await rate(other, id, { score: 3 });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ detail: "Conversation not found" });
  });
});

describe.runIf(isLocal)("outcomes", () => {
  it("follow the documented rules: abandoned, resolved, unresolved, thumbs and ratings, handoffs with their reason, the close", async () => {
    const shop = await seedTenant({ knowledge, chatbot: { handoff } });
    const started = Date.now();
    const abandoned = await newConversation(shop);
    const quiet = await conversation(shop, abandoned);
    expect(quiet).toMatchObject({
      outcome: "abandoned",
      outcome_final: false,
      handoff_reason: null,
      rating: null,
    });
    // Provisional until 24 hours after its last message (here: its start).
    const finalAt = Date.parse(quiet.outcome_final_at);
    expect(finalAt).toBeGreaterThanOrEqual(started + OUTCOME_WINDOW_MS - 1_000);
    expect(finalAt).toBeLessThanOrEqual(Date.now() + OUTCOME_WINDOW_MS);

    const answered = await newConversation(shop);
    const answer = await ask(shop, answered, QUESTION);
    expect(await conversation(shop, answered)).toMatchObject({ outcome: "resolved", outcome_final: false });
    const answerId = answer.messages.at(-1)?.message_id ?? "";
    await feedback(shop, answerId, { rating: "down" });
    expect((await conversation(shop, answered)).outcome).toBe("unresolved");
    await rate(shop, answered, { score: 4 });
    expect((await conversation(shop, answered)).outcome).toBe("resolved");
    await rate(shop, answered, { score: 3 });
    // A middling rating leaves it to the thumb on the last answer.
    expect((await conversation(shop, answered)).outcome).toBe("unresolved");

    const fallback = await newConversation(shop);
    await ask(shop, fallback, UNKNOWN);
    expect(await conversation(shop, fallback)).toMatchObject({ outcome: "unresolved", outcome_final: false });
    // A later real answer decides again (the thumb of an earlier answer no longer counts).
    await ask(shop, fallback, QUESTION);
    expect((await conversation(shop, fallback)).outcome).toBe("resolved");

    const asked = await newConversation(shop);
    await ask(shop, asked, "I want to talk to a human");
    const handed = await conversation(shop, asked);
    expect(handed).toMatchObject({
      status: "handoff",
      outcome: "handed_off",
      outcome_final: true,
      handoff_reason: "visitor_asked",
    });
    // Final: a rating afterwards is kept, the outcome stays.
    await rate(shop, asked, { score: 5 });
    expect(await conversation(shop, asked)).toMatchObject({ outcome: "handed_off", rating: { score: 5 } });

    const byClient = await newConversation(shop);
    await ask(shop, byClient, QUESTION);
    const handedOff = await call("POST", `/api/conversation/${byClient}/handoff`, {
      key: shop.apiKey,
      body: { reason: "VIP" },
    });
    expect(handedOff.status, handedOff.text).toBe(200);
    expect(await conversation(shop, byClient)).toMatchObject({
      outcome: "handed_off",
      outcome_final: true,
      handoff_reason: "client",
    });

    const closed = await newConversation(shop);
    await ask(shop, closed, UNKNOWN);
    expect((await call("POST", `/api/conversation/${closed}/close`, { key: shop.apiKey })).status).toBe(200);
    const atClose = await conversation(shop, closed);
    expect(atClose).toMatchObject({ outcome: "unresolved", outcome_final: true });
    // Final at the close: a rating afterwards does not change it.
    await rate(shop, closed, { score: 5 });
    expect((await conversation(shop, closed)).outcome).toBe("unresolved");
  });

  it("is frozen once 24 hours passed after the last message: a later thumb or rating (a clock 25 h ahead) changes nothing", async () => {
    const shop = await seedTenant({ knowledge });
    const id = await newConversation(shop);
    const turn = await ask(shop, id, QUESTION);
    const replyId = turn.messages.at(-1)?.message_id ?? "";
    const lastMessageAt = Date.parse(turn.messages.at(-1)?.created_at ?? "");
    const later = { ...domain(), clock: () => Date.now() + OUTCOME_WINDOW_MS + 3_600_000 };
    await giveFeedback(later, { organizationId: shop.organizationId, messageId: replyId, rating: "down" });
    await rateConversation(later, { organizationId: shop.organizationId, conversationId: id, score: 1 });
    const frozen = await conversation(shop, id);
    expect(frozen).toMatchObject({ outcome: "resolved", outcome_final: true, rating: { score: 1 } });
    expect(frozen.outcome_final_at).toBe(new Date(lastMessageAt + OUTCOME_WINDOW_MS).toISOString());
    const shown = (await history(shop, id)).messages.find((message) => message.message_id === replyId);
    expect(shown?.feedback?.rating).toBe("down");
  });
});

describe.runIf(isLocal)("the model's handoff", () => {
  it("records why: the visitor asked, or the chatbot could not answer (as the model said, or with no confident knowledge)", async () => {
    const bedrock = bedrockControl(environment.bedrockControlUrl ?? "");
    const cases = [
      [{ reason: "wants a person", because: "visitor_asked" }, "visitor_asked"],
      [{ reason: "no idea", because: "cannot_answer" }, "could_not_answer"],
      [{ reason: "unsure" }, "could_not_answer"],
    ] as const;
    for (const [input, expected] of cases) {
      const modelId = `test.outcome-${randomUUID()}`;
      const shop = await seedTenant({ chatbot: { engine: { kind: "bedrock", modelId }, handoff } });
      await bedrock.script(
        modelId,
        converseToolUse([{ toolUseId: "tooluse-o1", name: "request_human", input }]),
        converseText("Getting a colleague."),
      );
      const id = await newConversation(shop);
      await ask(shop, id, "Something only a person can sort out");
      expect([input, await conversation(shop, id)]).toMatchObject([
        input,
        { status: "handoff", outcome: "handed_off", outcome_final: true, handoff_reason: expected },
      ]);
    }
  });
});

describe.runIf(isLocal)("feedback webhooks", () => {
  it("delivers message.feedback and conversation.rated, signed, once per feedback given", async () => {
    const shop = await seedTenant({ knowledge });
    const hook = receiver(`feedback-${shop.organizationId.slice(0, 8)}`);
    const created = await createWebhookEndpoint(webhooksContext(), {
      organizationId: shop.organizationId,
      url: hook.url,
      events: ["message.feedback", "conversation.rated"],
    });
    await hook.configure({ secrets: [created.secret] });
    const id = await newConversation(shop);
    const turn = await ask(shop, id, QUESTION);
    const replyId = turn.messages.at(-1)?.message_id ?? "";
    const up = await feedback(shop, replyId, { rating: "up" });
    const down = await feedback(shop, replyId, { rating: "down", comment: "Wrong parcel" });
    const rated = await rate(shop, id, { score: 4, comment: "Fine" });
    const requests = await eventually(hook.requests, (list) => list.length >= 3);
    expect(requests.every((request) => request.verified.every(Boolean))).toBe(true);
    const bodies = requests.map(bodyOf).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(bodies.map((body) => body.type)).toEqual([
      "message.feedback",
      "message.feedback",
      "conversation.rated",
    ]);
    const base = { organization_id: shop.organizationId, chatbot_id: shop.chatbotId, conversation_id: id };
    expect(bodies[0]?.data).toMatchObject({
      ...base,
      message_id: replyId,
      rating: "up",
      comment: null,
      given_at: up.body.given_at,
      previous_rating: null,
    });
    expect(bodies[1]?.data).toMatchObject({
      ...base,
      message_id: replyId,
      rating: "down",
      comment: "Wrong parcel",
      given_at: down.body.given_at,
      previous_rating: "up",
    });
    expect(bodies[2]?.data).toMatchObject({
      ...base,
      score: 4,
      comment: "Fine",
      rated_at: rated.body.rated_at,
      previous_score: null,
    });
    // Nothing more comes (one event per feedback given; the turn's own changes are not feedback).
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_500));
    expect(await hook.requests()).toHaveLength(3);
  });
});

interface Figures {
  conversations: number;
  visitor_messages: number;
  resolved: number;
  handed_off: number;
  unresolved: number;
  abandoned: number;
  handoff_reasons: Record<string, number>;
  fallback_replies: number;
  feedback_up: number;
  feedback_down: number;
  ratings: number;
  rating_average: number | null;
  first_replies: number;
  first_reply_ms_p50: number | null;
  lookups: number;
  lookups_by_outcome: Record<string, number>;
}
interface Analytics {
  from: string;
  to: string;
  chatbot_id: string | null;
  granularity: string;
  series: (Figures & { date: string })[];
  totals: Figures;
}

const today = () => new Date().toISOString().slice(0, 10);

describe.runIf(hasIdentity && isLocal)("analytics", () => {
  const read = (tenant: ManagedTenant, query = "") =>
    manage<Analytics>("GET", `/manage/analytics${query}`, {
      as: tenant.viewer.token,
      organization: tenant.organizationId,
    });

  it("counts each outcome, handoff reason, fallback, thumb, rating, first reply and visitor message exactly; never a Try it conversation", async () => {
    const [home, other] = await Promise.all([
      seedManagedTenant({ knowledge, chatbot: { handoff } }),
      seedManagedTenant({ knowledge }),
    ]);
    // 1 resolved (thumb up), 1 unresolved (a fallback, thumb down), 1 handed off (asked), 1 handed
    // off (client), 1 abandoned, 1 resolved rated 5, 1 unresolved rated 2; plus a Try it conversation.
    const firstReplies: number[] = [];
    const firstReplyOf = async (id: string) => {
      const messages = (await history(home, id)).messages;
      const visitor = messages.find((message) => message.role === "user");
      const reply = messages.find((message) => message.role === "assistant");
      if (visitor && reply) firstReplies.push(Date.parse(reply.created_at) - Date.parse(visitor.created_at));
    };
    const resolved = await newConversation(home);
    const resolvedTurn = await ask(home, resolved, QUESTION);
    await feedback(home, resolvedTurn.messages.at(-1)?.message_id ?? "", { rating: "up" });
    await firstReplyOf(resolved);

    const unresolved = await newConversation(home);
    const fallbackTurn = await ask(home, unresolved, UNKNOWN);
    await feedback(home, fallbackTurn.messages.at(-1)?.message_id ?? "", { rating: "down" });
    await firstReplyOf(unresolved);

    const asked = await newConversation(home);
    await ask(home, asked, "Can I talk to a human please");
    await firstReplyOf(asked);

    const byClient = await newConversation(home);
    await ask(home, byClient, QUESTION);
    await ask(home, byClient, UNKNOWN);
    await call("POST", `/api/conversation/${byClient}/handoff`, { key: home.apiKey, body: {} });
    await firstReplyOf(byClient);

    await newConversation(home);

    const happy = await newConversation(home);
    await ask(home, happy, UNKNOWN);
    await rate(home, happy, { score: 5 });
    await firstReplyOf(happy);

    const unhappy = await newConversation(home);
    await ask(home, unhappy, QUESTION);
    await rate(home, unhappy, { score: 2 });
    await firstReplyOf(unhappy);

    const tryIt = await manage<{ key: string }>("POST", "/manage/api-keys", {
      as: home.admin.token,
      organization: home.organizationId,
      body: { name: "Try it", test: true },
    });
    expect(tryIt.status, tryIt.text).toBe(201);
    const test = await api.startConversation(tryIt.body.key, { chatbot_id: home.chatbotId });
    expect(test.status, test.text).toBe(200);
    const testTurn = await api.sendMessage(tryIt.body.key, {
      conversation_id: test.body.conversation_id,
      message: UNKNOWN,
    });
    await feedback(home, testTurn.body.messages.at(-1)?.message_id ?? "", { rating: "down" });
    await rate(home, test.body.conversation_id, { score: 1 });

    const expected = {
      conversations: 7,
      visitor_messages: 7,
      resolved: 2,
      handed_off: 2,
      unresolved: 2,
      abandoned: 1,
      handoff_reasons: { visitor_asked: 1, could_not_answer: 0, tool_failed: 0, client: 1, agent: 0 },
      fallback_replies: 3,
      feedback_up: 1,
      feedback_down: 1,
      ratings: 2,
      rating_average: 3.5,
      first_replies: 6,
      lookups: 0,
      lookups_by_outcome: {
        found: 0,
        not_found: 0,
        auth_failed: 0,
        rate_limited: 0,
        timeout: 0,
        unavailable: 0,
      },
    };
    // The counters follow the table's stream: poll until the last change is counted.
    const settled = await eventually(
      () => read(home),
      (response) =>
        response.status === 200 &&
        response.body.totals.ratings === expected.ratings &&
        response.body.totals.feedback_down === expected.feedback_down &&
        response.body.totals.handed_off === expected.handed_off &&
        response.body.totals.conversations === expected.conversations,
    );
    // Then give any straggling change time to land, and read again: exactly these figures.
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_500));
    const response = await read(home);
    expect(settled.status).toBe(200);
    const { totals, series } = response.body;
    expect(totals).toMatchObject(expected);
    // Resolved: the thumbed-up answer, and the fallback rated 5 (ratings decide before thumbs).
    // Unresolved: the thumbed-down fallback, and the answer rated 2.
    const sorted = [...firstReplies].sort((a, b) => a - b);
    expect(sorted).toHaveLength(6);
    const median = ((sorted[2] ?? 0) + (sorted[3] ?? 0)) / 2;
    const p50 = totals.first_reply_ms_p50 ?? -1;
    // DDSketch's median is a bucket's value (within 2 %) of rank ⌊q·(n−1)⌋: between the middle two.
    expect(p50).toBeGreaterThanOrEqual(Math.floor((sorted[2] ?? 0) * 0.98) - 1);
    expect(p50).toBeLessThanOrEqual(Math.ceil((sorted[3] ?? 0) * 1.02) + 1);
    expect(median).toBeGreaterThan(0);

    // The series: 30 days by default, today holds everything.
    expect(response.body).toMatchObject({ to: today(), chatbot_id: null, granularity: "day" });
    expect(series).toHaveLength(30);
    expect(series.at(-1)).toMatchObject({ date: today(), ...expected });
    expect(series.slice(0, -1).every((day) => day.conversations === 0 && day.rating_average === null)).toBe(
      true,
    );

    // One chatbot's: the same (it is the only one); another chatbot's id: zeros.
    const mine = await read(home, `?chatbot_id=${home.chatbotId}&from=${today()}&to=${today()}`);
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.series).toHaveLength(1);
    expect(mine.body.totals).toMatchObject(expected);
    const theirs = await read(home, `?chatbot_id=${other.chatbotId}&from=${today()}&to=${today()}`);
    expect(theirs.body.totals.conversations).toBe(0);
    // Another organization sees none of it.
    expect((await read(other)).body.totals.conversations).toBe(0);
  });

  it("refuses a range that makes no sense, longer than 366 days, or an unknown granularity", async () => {
    const home = await seedManagedTenant();
    expect((await read(home, "?from=2026-02-01&to=2026-01-01")).status).toBe(422);
    expect((await read(home, "?from=2024-01-01&to=2026-01-01")).status).toBe(422);
    expect((await read(home, "?granularity=week")).status).toBe(422);
    expect((await read(home, "?from=2026-13-01")).status).toBe(422);
    const year = await read(home, "?from=2025-01-01&to=2025-12-31");
    expect(year.status, year.text).toBe(200);
    expect(year.body.series).toHaveLength(365);
  });
});
