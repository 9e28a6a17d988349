/**
 * A local Amazon Bedrock Runtime that speaks the Converse protocol (aws-facts.md §D):
 * `POST /model/{modelId}/converse` with JSON, AWS-style errors as status + `x-amzn-ErrorType` +
 * `{"message": …}`, over cleartext HTTP/2 as the SDK's default handler expects. It ignores the SigV4
 * signature, so the real SDK can talk to it with dummy keys.
 */
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from "#test/fakes/scripted-http";

export type FakeBedrock = ScriptedServer;

export function startFakeBedrock(): Promise<FakeBedrock> {
  return startScriptedServer(
    (method, path) => {
      const match = /^\/model\/([^/]+)\/converse$/.exec(path);
      return method === "POST" && match?.[1] ? { modelId: decodeURIComponent(match[1]) } : undefined;
    },
    awsError(404, "UnknownOperationException", "Unknown operation"),
    "h2c",
  );
}

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
}

/** A final answer: one text block, stop reason `end_turn` unless told otherwise. */
export function converseText(
  text: string,
  usage: FakeUsage = { inputTokens: 10, outputTokens: 5 },
  stopReason = "end_turn",
): ScriptedResponse {
  return converseReply([{ text }], stopReason, usage);
}

/** A round asking for tools: optional preamble text and one toolUse block per call. */
export function converseToolUse(
  calls: { toolUseId: string; name: string; input: Record<string, unknown> }[],
  usage: FakeUsage = { inputTokens: 20, outputTokens: 8 },
): ScriptedResponse {
  return converseReply(
    calls.map((call) => ({ toolUse: call })),
    "tool_use",
    usage,
  );
}

export function converseReply(content: unknown[], stopReason: string, usage: FakeUsage): ScriptedResponse {
  return {
    body: {
      output: { message: { role: "assistant", content } },
      stopReason,
      usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens },
      metrics: { latencyMs: 42 },
    },
  };
}

export function awsError(
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): ScriptedResponse {
  return { status, headers: { "x-amzn-errortype": type, ...headers }, body: { message } };
}
