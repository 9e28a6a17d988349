/**
 * The embedding answers of the local model stand-ins, in each provider's wire format, computed by
 * the local concept model (test/fakes/concept-embedding.ts):
 * - Bedrock InvokeModel with Titan Text Embeddings V2's body: `{"inputText", "dimensions"?,
 *   "normalize"?, "embeddingTypes"?}` → `{"embedding", "embeddingsByType": {"float"}, "inputTextTokenCount"}`;
 * - OpenAI's `POST /v1/embeddings`: `{"model", "input": string | string[], "dimensions"?,
 *   "encoding_format"?}` → `{"object": "list", "data": [{"object": "embedding", "index", "embedding"}],
 *   "model", "usage"}`.
 * A malformed request gets the provider's own error shape (Bedrock's ValidationException, OpenAI's
 * invalid_request_error).
 */
import { conceptEmbedding, roughTokenCount } from "#test/fakes/concept-embedding";
import type { ScriptedResponse } from "#test/fakes/scripted-http";

const TITAN_DIMENSIONS = [256, 512, 1024];

export function titanEmbeddingAnswer(body: unknown): ScriptedResponse {
  const request = (body ?? {}) as { inputText?: unknown; dimensions?: unknown; embeddingTypes?: unknown };
  const dimensions = request.dimensions ?? 1024;
  if (typeof request.inputText !== "string" || request.inputText.length === 0)
    return validation(
      "Malformed input request: #: required key [inputText] not found, please reformat your input and try again.",
    );
  if (typeof dimensions !== "number" || !TITAN_DIMENSIONS.includes(dimensions))
    return validation(
      "Malformed input request: #/dimensions: 1024, 512 or 256 expected, please reformat your input and try again.",
    );
  const embedding = conceptEmbedding(request.inputText, dimensions);
  return {
    headers: {
      "content-type": "application/json",
      "x-amzn-bedrock-input-token-count": String(roughTokenCount(request.inputText)),
    },
    body: {
      embedding,
      embeddingsByType: { float: embedding },
      inputTextTokenCount: roughTokenCount(request.inputText),
    },
  };
}

function validation(message: string): ScriptedResponse {
  return { status: 400, headers: { "x-amzn-errortype": "ValidationException" }, body: { message } };
}

export function openAiEmbeddingsAnswer(body: unknown): ScriptedResponse {
  const request = (body ?? {}) as { model?: unknown; input?: unknown; dimensions?: unknown };
  const inputs = typeof request.input === "string" ? [request.input] : request.input;
  if (
    typeof request.model !== "string" ||
    !Array.isArray(inputs) ||
    inputs.length === 0 ||
    !inputs.every((input) => typeof input === "string")
  ) {
    return {
      status: 400,
      body: {
        error: {
          message: "'input' must be a string or an array of strings",
          type: "invalid_request_error",
          code: null,
        },
      },
    };
  }
  const dimensions = typeof request.dimensions === "number" ? request.dimensions : 256;
  const tokens = (inputs as string[]).reduce((sum, input) => sum + roughTokenCount(input), 0);
  return {
    body: {
      object: "list",
      data: (inputs as string[]).map((input, index) => ({
        object: "embedding",
        index,
        embedding: conceptEmbedding(input, dimensions),
      })),
      model: request.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    },
  };
}
