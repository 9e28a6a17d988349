/**
 * A local OpenAI-compatible server: `POST /v1/chat/completions` (and `/chat/completions`, for a
 * base URL without the version segment), with `tool_calls`, usage, and OpenAI-style errors
 * (`{"error": {"message", "type", "code"}}`, a `Retry-After` header on 429 when asked).
 */
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from "#test/fakes/scripted-http";

export type FakeOpenAi = ScriptedServer;

export function startFakeOpenAi(): Promise<FakeOpenAi> {
  return startScriptedServer(
    (method, path) =>
      method === "POST" && (path === "/v1/chat/completions" || path === "/chat/completions") ? {} : undefined,
    openAiError(404, "Not found", "invalid_request_error"),
  );
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export function completionText(
  text: string | null,
  usage: FakeUsage = { prompt_tokens: 11, completion_tokens: 6 },
  finishReason = "stop",
): ScriptedResponse {
  return completion({ role: "assistant", content: text }, finishReason, usage);
}

export function completionToolCalls(
  calls: { id: string; name: string; arguments: string }[],
  usage: FakeUsage = { prompt_tokens: 21, completion_tokens: 9 },
): ScriptedResponse {
  return completion(
    {
      role: "assistant",
      content: null,
      tool_calls: calls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      })),
    },
    "tool_calls",
    usage,
  );
}

function completion(message: unknown, finishReason: string, usage: FakeUsage): ScriptedResponse {
  return {
    body: {
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "fake-model",
      choices: [{ index: 0, message, finish_reason: finishReason }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

export function openAiError(
  status: number,
  message: string,
  type: string,
  headers: Record<string, string> = {},
): ScriptedResponse {
  return { status, headers, body: { error: { message, type, code: null } } };
}
