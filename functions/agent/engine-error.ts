/**
 * The one error a model engine throws. The turn answers with the chatbot's fallback reply whatever
 * the reason; the reason exists for metrics and alarms, so the set is small and closed.
 * Messages name what failed (status, error type, stop reason), never what the visitor wrote.
 */

export type EngineErrorReason =
  /** The provider kept refusing for rate or capacity, and retries ran out of attempts or time. */
  | "throttled"
  /** The turn's deadline passed or the model itself timed out. */
  | "timeout"
  /** A streamed reply stopped coming: no data from the model for the stream's idle limit. */
  | "stalled"
  /** The provider failed (5xx, model error, refusal, content filter) or could not be reached. */
  | "model_error"
  /** The model answered, but not with something usable (no text, bad tool use, endless tool loop). */
  | "malformed_output"
  /** Our side is wrong: unknown model, denied access, bad credentials, invalid request. */
  | "configuration";

export class EngineError extends Error {
  override readonly name = "EngineError";
  readonly reason: EngineErrorReason;

  constructor(reason: EngineErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

export function isEngineError(error: unknown): error is EngineError {
  return error instanceof EngineError;
}
