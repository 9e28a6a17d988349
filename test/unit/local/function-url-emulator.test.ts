/**
 * The local function URL emulator runs a streaming handler as Lambda does behind a function URL in
 * response-streaming mode: the runtime's globals and prelude, output as it is written, a client
 * that goes away without stopping the function, and the documented limits.
 */
import type { Writable } from "node:stream";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  installLambdaStreamingGlobals,
  isStreamingHandler,
  type RunningFunctionUrl,
  startFunctionUrlEmulator,
} from "#lib/local/function-url-emulator";
import type { EmulatedFunction, LambdaContext } from "#lib/local/http-api-emulator";

type StreamingHandler = (event: unknown, stream: Writable, context: LambdaContext) => Promise<void>;
interface LambdaGlobals {
  streamifyResponse<H>(handler: H): H;
  HttpResponseStream: { from(stream: Writable, prelude: unknown): Writable };
}
const lambda = () => (globalThis as unknown as { awslambda: LambdaGlobals }).awslambda;

beforeAll(() => installLambdaStreamingGlobals());

const running: RunningFunctionUrl[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((url) => url.close()));
});

async function functionUrl(
  handler: StreamingHandler,
  options: { timeoutSeconds?: number; limits?: object } = {},
) {
  const fn: EmulatedFunction = {
    name: "stream",
    handler: lambda().streamifyResponse(handler) as unknown as EmulatedFunction["handler"],
    timeoutSeconds: options.timeoutSeconds ?? 5,
    memoryMb: 128,
  };
  const started = await startFunctionUrlEmulator({
    fn,
    ...(options.limits ? { limits: options.limits } : {}),
  });
  running.push(started);
  return started;
}

/** A gate a handler waits at until the test opens it. */
function gate() {
  const { promise, resolve } = Promise.withResolvers<void>();
  return { wait: () => promise, open: () => resolve() };
}

async function readText(response: Response): Promise<string> {
  return new TextDecoder().decode(await response.arrayBuffer());
}

describe("function URL emulator (response streaming)", () => {
  it("provides Lambda's streaming globals and marks streaming handlers", () => {
    const marked = lambda().streamifyResponse(async () => undefined);
    expect(isStreamingHandler(marked)).toBe(true);
    expect(isStreamingHandler(async () => undefined)).toBe(false);
  });

  it("answers with the prelude's status, headers and cookies, then the body as written", async () => {
    const url = await functionUrl(async (_event, stream) => {
      const out = lambda().HttpResponseStream.from(stream, {
        statusCode: 201,
        headers: { "Content-Type": "text/plain", "X-Custom": "yes" },
        cookies: ["a=1; Path=/"],
      });
      out.write("hello ");
      out.end("world");
    });
    const response = await fetch(`${url.baseUrl}/x`);
    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toBe("text/plain");
    expect(response.headers.get("x-custom")).toBe("yes");
    expect(response.headers.get("set-cookie")).toBe("a=1; Path=/");
    expect(response.headers.get("x-amzn-requestid")).toBeTruthy();
    expect(await readText(response)).toBe("hello world");
  });

  it("sends what the function wrote before it has finished", async () => {
    const held = gate();
    const url = await functionUrl(async (_event, stream) => {
      const out = lambda().HttpResponseStream.from(stream, { statusCode: 200, headers: {} });
      out.write("first");
      await held.wait();
      out.end("second");
    });
    const response = await fetch(url.baseUrl);
    const reader = response.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toBe("first");
    held.open();
    const rest = await reader?.read();
    expect(new TextDecoder().decode(rest?.value)).toBe("second");
  });

  it("is a 200 of the stream's content type without a prelude", async () => {
    const url = await functionUrl(async (_event, stream) => {
      (stream as unknown as { setContentType(type: string): void }).setContentType("text/plain");
      stream.end("plain");
    });
    const response = await fetch(url.baseUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain");
    expect(await readText(response)).toBe("plain");
  });

  it("hands over a function URL's payload 2.0 event, without an authorizer", async () => {
    const url = await functionUrl(async (event, stream) => {
      lambda().HttpResponseStream.from(stream, { statusCode: 200, headers: {} }).end(JSON.stringify(event));
    });
    const response = await fetch(`${url.baseUrl}/api/message/stream?a=1`, {
      method: "POST",
      headers: { "X-Mixed": "Case", "content-type": "application/json" },
      body: '{"x":1}',
    });
    const event = JSON.parse(await readText(response)) as {
      routeKey: string;
      rawPath: string;
      headers: Record<string, string>;
      body: string;
      isBase64Encoded: boolean;
      queryStringParameters: Record<string, string>;
      requestContext: {
        accountId: string;
        http: { method: string };
        authorizer?: unknown;
        requestId: string;
      };
    };
    expect(event).toMatchObject({
      routeKey: "$default",
      rawPath: "/api/message/stream",
      body: '{"x":1}',
      isBase64Encoded: false,
      queryStringParameters: { a: "1" },
      requestContext: { accountId: "anonymous", http: { method: "POST" } },
    });
    expect(event.headers["x-mixed"]).toBe("Case");
    expect(event.requestContext.authorizer).toBeUndefined();
    expect(response.headers.get("x-amzn-requestid")).toBe(event.requestContext.requestId);
  });

  it("keeps the function running when the client disconnects, dropping what it writes", async () => {
    const held = gate();
    const finished = gate();
    let wroteAfter = false;
    const url = await functionUrl(async (_event, stream) => {
      const out = lambda().HttpResponseStream.from(stream, { statusCode: 200, headers: {} });
      out.write("before");
      await held.wait();
      out.write("after");
      await new Promise<void>((resolve) => out.end(resolve));
      wroteAfter = true;
      finished.open();
    });
    const abort = new AbortController();
    const response = await fetch(url.baseUrl, { signal: abort.signal });
    await response.body?.getReader().read();
    abort.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    held.open();
    await finished.wait();
    expect(wroteAfter).toBe(true);
  });

  it("answers 502 when the function fails before writing, and cuts the stream when it fails after", async () => {
    const early = await functionUrl(async () => {
      throw new Error("boom");
    });
    const response = await fetch(early.baseUrl);
    expect(response.status).toBe(502);

    const late = await functionUrl(async (_event, stream) => {
      lambda().HttpResponseStream.from(stream, { statusCode: 200, headers: {} }).write("partial");
      await new Promise((resolve) => setTimeout(resolve, 20));
      throw new Error("boom");
    });
    const cut = await fetch(late.baseUrl);
    await expect(readText(cut)).rejects.toThrow();
  });

  it("cuts the stream at the function's timeout", async () => {
    const url = await functionUrl(
      async (_event, stream) => {
        lambda().HttpResponseStream.from(stream, { statusCode: 200, headers: {} }).write("started");
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      },
      { timeoutSeconds: 1 },
    );
    const response = await fetch(url.baseUrl);
    await expect(readText(response)).rejects.toThrow();
  });

  it("refuses a request over the payload limit (413), and cuts a response over its limit", async () => {
    const url = await functionUrl(
      async (_event, stream) => {
        const out = lambda().HttpResponseStream.from(stream, { statusCode: 200, headers: {} });
        out.write("x".repeat(600));
        out.end("y".repeat(600));
      },
      { limits: { requestBytes: 100, responseBytes: 1_000 } },
    );
    const tooLarge = await fetch(url.baseUrl, { method: "POST", body: "z".repeat(200) });
    expect(tooLarge.status).toBe(413);
    await expect(readText(await fetch(url.baseUrl))).rejects.toThrow();
  });

  it("streams the first bytes at full speed and the rest at the capped rate", async () => {
    const url = await functionUrl(
      async (_event, stream) => {
        const out = lambda().HttpResponseStream.from(stream, { statusCode: 200, headers: {} });
        for (let i = 0; i < 4; i++) out.write("z".repeat(1_000));
        out.end();
      },
      { limits: { uncappedBytes: 1_000, cappedBytesPerSecond: 10_000 } },
    );
    const started = Date.now();
    const body = await readText(await fetch(url.baseUrl));
    // 3,000 bytes past the uncapped 1,000 at 10,000 bytes/s take at least 0.3 s.
    expect(body).toHaveLength(4_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });
});
