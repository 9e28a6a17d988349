/**
 * Trying a chatbot's engine before saving it (POST /manage/chatbots/{chatbot_id}/engine/test): one
 * short model call with the engine as it would be saved, through the same code a turn uses (the
 * same address guard, key handling and deadline), so "it answered here" means a visitor gets
 * answers too. Nothing is stored: not the key, not the reply, not usage.
 */
import { emptyToolBox } from "#functions/agent/engine";
import { EngineError } from "#functions/agent/engine-error";
import { ChatApiError } from "#functions/agent/openai-http";
import { getChatbot } from "#functions/domain/chatbots";
import type { DomainContext } from "#functions/domain/context";
import type { AgentServices } from "#functions/domain/messages";
import { BlockedAddressError } from "#functions/net/outbound-address";
import type { EngineConfig } from "#functions/store/items";

/** How long the engine may take to answer the test. */
export const ENGINE_TEST_BUDGET_MS = 15_000;
/** The message the test sends when none is given. */
export const ENGINE_TEST_MESSAGE = "Hello! Please answer with one short sentence.";

export type EngineTestFailure =
  | "auth_failed"
  | "not_found"
  | "rate_limited"
  | "timeout"
  | "blocked_address"
  | "unreachable"
  | "bad_response"
  | "model_error"
  | "configuration";

export type EngineTestResult =
  | {
      ok: true;
      reply: string;
      latencyMs: number;
      inputTokens: number;
      outputTokens: number;
    }
  | { ok: false; latencyMs: number; failure: EngineTestFailure; message: string; status?: number };

export interface EngineTestInput {
  organizationId: string;
  chatbotId: string;
  /**
   * The engine to test, from the chatbot's current one (the settings' rules decide: a stored key is
   * kept for the same server), and a key pasted with the test (plaintext, used once, not stored).
   */
  choose: (current: EngineConfig) => { engine: EngineConfig; modelKey?: string };
  message?: string;
}

export async function testEngine(
  ctx: DomainContext & { agent: AgentServices },
  input: EngineTestInput,
): Promise<EngineTestResult> {
  const chatbot = await getChatbot(ctx, input.organizationId, input.chatbotId);
  const { engine: tested, modelKey } = input.choose(chatbot.engine);
  const started = Date.now();
  const deadline = started + ENGINE_TEST_BUDGET_MS;
  const signal = AbortSignal.timeout(ENGINE_TEST_BUDGET_MS);
  try {
    const engine = await ctx.agent.engineFor(
      { chatbot: { ...chatbot, engine: tested }, tools: [] },
      modelKey === undefined ? {} : { apiKey: modelKey },
    );
    const reply = await engine.reply({
      instructions: chatbot.instructions,
      history: [],
      message: { text: input.message ?? ENGINE_TEST_MESSAGE, images: [] },
      tools: emptyToolBox,
      settings: { temperature: chatbot.temperature, maxOutputTokens: Math.min(chatbot.maxOutputTokens, 200) },
      signal,
      deadline,
    });
    return {
      ok: true,
      reply: reply.messages.join("\n\n"),
      latencyMs: Date.now() - started,
      inputTokens: reply.usage?.inputTokens ?? 0,
      outputTokens: reply.usage?.outputTokens ?? 0,
    };
  } catch (error) {
    return { ok: false, latencyMs: Date.now() - started, ...describeFailure(error) };
  }
}

/** What went wrong, in words a person can act on: the provider's status and error name, never a key or a reply. */
function describeFailure(error: unknown): { failure: EngineTestFailure; message: string; status?: number } {
  const cause = error instanceof EngineError ? error.cause : error;
  const reason = error instanceof EngineError ? error.reason : undefined;
  const status =
    cause instanceof ChatApiError
      ? cause.status
      : ((cause as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode ??
        undefined);
  const name = cause instanceof Error && !(cause instanceof ChatApiError) ? cause.name : undefined;
  const answered =
    status === undefined ? "" : ` (HTTP ${status}${name && name !== "Error" ? `, ${name}` : ""})`;
  const withStatus = status === undefined ? {} : { status };
  if (cause instanceof BlockedAddressError) {
    return {
      failure: "blocked_address",
      message: `The model server's address is not a public one (${cause.reason}): the service reaches public addresses only`,
    };
  }
  if (status === 401 || status === 403)
    return { failure: "auth_failed", message: `The model server refused the key${answered}`, ...withStatus };
  if (status === 404)
    return {
      failure: "not_found",
      message: `The model server knows no such model or address${answered}`,
      ...withStatus,
    };
  if (reason === "throttled" || status === 429)
    return {
      failure: "rate_limited",
      message: `The model server is limiting requests${answered}`,
      ...withStatus,
    };
  if (reason === "timeout" || reason === "stalled")
    return { failure: "timeout", message: `No answer within ${ENGINE_TEST_BUDGET_MS / 1000} s` };
  if (reason === "malformed_output")
    return {
      failure: "bad_response",
      message: "The model server's answer was not a usable reply",
      ...withStatus,
    };
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (
    code &&
    ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ECONNRESET", "EHOSTUNREACH", "ETIMEDOUT"].includes(code)
  )
    return { failure: "unreachable", message: `The model server could not be reached (${code})` };
  if (reason === "configuration")
    return {
      failure: "configuration",
      message: `The model server refused the request${answered}`,
      ...withStatus,
    };
  if (reason === undefined)
    return {
      failure: "configuration",
      message: "The engine could not be set up (its key could not be read)",
    };
  return { failure: "model_error", message: `The model failed${answered}`, ...withStatus };
}
