/**
 * Invokes a loaded function as Lambda would for an event source mapping: a serialised copy of the
 * event, a context with the function's name and remaining time, the function's timeout enforced
 * (a timeout is a function error; the handler runs on in the background, as a timed-out Lambda's
 * work is simply lost), and the result serialised back.
 */
import { randomUUID } from "node:crypto";
import type { EmulatedFunction, LambdaContext } from "./http-api-emulator.ts";

export class FunctionInvokeError extends Error {
  override readonly name = "FunctionInvokeError";
  readonly timedOut: boolean;
  constructor(functionName: string, timedOut: boolean, cause?: unknown) {
    super(`function ${functionName} ${timedOut ? "timed out" : "failed"}`, { cause });
    this.timedOut = timedOut;
  }
}

export async function invokeFunction(fn: EmulatedFunction, event: unknown): Promise<unknown> {
  // A function not loaded up front (cold starts) initialises on its first invocation, before its
  // timeout starts, as Lambda's init phase does.
  try {
    await fn.init?.();
  } catch (error) {
    throw new FunctionInvokeError(fn.name, false, error);
  }
  const started = Date.now();
  const timeoutMs = fn.timeoutSeconds * 1000;
  const context: LambdaContext = {
    functionName: fn.name,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${fn.name}`,
    memoryLimitInMB: String(fn.memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${fn.name}`,
    logStreamName: "local",
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
  };
  const run = Promise.resolve().then(() => fn.handler(JSON.parse(JSON.stringify(event)), context));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FunctionInvokeError(fn.name, true)), timeoutMs);
  });
  try {
    const result = await Promise.race([run, timeout]);
    return result === undefined ? null : JSON.parse(JSON.stringify(result));
  } catch (error) {
    if (error instanceof FunctionInvokeError) throw error;
    throw new FunctionInvokeError(fn.name, false, error);
  } finally {
    clearTimeout(timer);
    run.catch(() => undefined);
  }
}
