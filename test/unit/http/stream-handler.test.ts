/**
 * A streaming route's invocation lasts as long as the work behind its stream: when the connection
 * breaks mid-stream, the handler still waits for that work (on Lambda, an invocation that ends is
 * frozen, and work left running in it would stop half-way).
 */
import { PassThrough, Writable } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import * as z from "zod/mini";
import type { ApiEvent, RouteContract } from "#functions/http/api-handler";
import { apiStreamHandler } from "#functions/http/stream-handler";
import { installLambdaStreamingGlobals } from "#lib/local/function-url-emulator";

beforeAll(() => installLambdaStreamingGlobals());

const contract = {
  operationId: "streamTest",
  summary: "test",
  description: "test",
  tags: [],
  auth: "apiKey",
  response: z.object({}),
  errors: [],
} as const satisfies RouteContract<"apiKey">;

const event = (): ApiEvent =>
  ({
    version: "2.0",
    routeKey: "$default",
    rawPath: "/s",
    rawQueryString: "",
    headers: { authorization: "Bearer whatever" },
    requestContext: {
      requestId: "req-1",
      http: { method: "POST", path: "/s", protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "" },
    },
    isBase64Encoded: false,
  }) as unknown as ApiEvent;

/** A response stream whose connection breaks at the first body write. */
function breakingStream(): Writable & { setContentType(type: string): void } {
  let writes = 0;
  const stream = new Writable({
    write(_chunk, _encoding, callback) {
      writes++;
      callback(writes > 1 ? new Error("connection reset") : null);
    },
  });
  return Object.assign(stream, { setContentType: () => undefined });
}

describe("a streaming route's invocation", () => {
  it("ends only once the work behind the stream is done, even when the connection broke", async () => {
    // Prepare
    const body = new PassThrough();
    const work = Promise.withResolvers<void>();
    const handler = apiStreamHandler(
      contract,
      { method: "POST", path: "/s" },
      async () => ({ stream: body, headers: { "content-type": "text/event-stream" }, done: work.promise }),
      {
        authorize: async () => ({
          outcome: "allowed",
          organizationId: "org",
          keyId: "key",
          limit: 10,
          remaining: 9,
          resetAt: 1,
        }),
      },
    );
    let settled = false;
    // Act
    const invocation = handler(event(), breakingStream(), {
      getRemainingTimeInMillis: () => 30_000,
    } as never).then(
      () => (settled = true),
      () => (settled = true),
    );
    body.write("event: message.start\n\n");
    body.write("event: message.delta\n\n");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const settledBeforeWork = settled;
    body.end();
    work.resolve();
    await invocation;
    // Assess
    expect(settledBeforeWork).toBe(false);
    expect(settled).toBe(true);
  });
});
