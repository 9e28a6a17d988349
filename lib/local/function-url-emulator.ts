/**
 * A local emulator of a Lambda function URL in response-streaming mode (InvokeMode RESPONSE_STREAM),
 * in front of a streaming handler, as Lambda's Node.js runtime runs one:
 *
 *  - the runtime's globals: `awslambda.streamifyResponse(handler)` marks a handler as streaming, and
 *    `awslambda.HttpResponseStream.from(stream, prelude)` makes its first write the HTTP prelude
 *    (JSON status, headers and cookies, then 8 NUL bytes: application/vnd.awslambda.http-integration-response),
 *    as the runtime interface client does; a stream without a prelude is a 200 of its content type
 *    (application/octet-stream unless set);
 *  - the event: payload format 2.0 as a function URL sends it (routeKey `$default`, no authorizer,
 *    the same header, cookie, query and base64 rules as the HTTP API emulator);
 *  - the response goes out as the handler writes it (chunked), never buffered;
 *  - a client that disconnects does not stop the function: it runs on, and what it writes is
 *    dropped (Lambda documents the same, and bills the whole run);
 *  - limits: request payload 6 MB (413), response 200 MB (the stream is cut there), the first 6 MB
 *    of a response at full speed and the rest at 2 MB/s, the function's timeout (the stream is cut);
 *  - a function that fails before it wrote anything is a 502 (its body here is unverified on AWS);
 *    one that fails after is a cut stream.
 * The function URL has AuthType NONE on the stack: the function checks the bearer key itself.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import {
  buildEvent,
  type EmulatedFunction,
  type LambdaContext,
  readBody,
  requestTarget,
} from "./http-api-emulator.ts";

const STREAMING = Symbol.for("aws.lambda.runtime.handler.streaming");
const PRELUDE_CONTENT_TYPE = "application/vnd.awslambda.http-integration-response";
const DELIMITER = Buffer.alloc(8);

export const functionUrlLimits = {
  requestBytes: 6 * 1024 * 1024,
  responseBytes: 200 * 1024 * 1024,
  uncappedBytes: 6 * 1024 * 1024,
  cappedBytesPerSecond: 2 * 1024 * 1024,
} as const;

interface ResponseStreamLike {
  setContentType(type: string): void;
  _onBeforeFirstWrite?: (write: (chunk: Uint8Array | string) => void) => void;
}

/**
 * Installs Lambda's streaming globals in this process (the bundles call them when loaded), as the
 * Node.js runtime provides them. Idempotent.
 */
export function installLambdaStreamingGlobals(): void {
  // The SDK keeps state of its own under the same global (its invoke store): add to it, never replace it.
  const scope = globalThis as { awslambda?: Record<string, unknown> };
  scope.awslambda ??= {};
  if (typeof scope.awslambda.streamifyResponse === "function") return;
  Object.assign(scope.awslambda, {
    streamifyResponse: <H extends object>(handler: H): H => {
      (handler as Record<symbol, unknown>)[STREAMING] = "response";
      return handler;
    },
    HttpResponseStream: {
      from(stream: ResponseStreamLike, prelude: unknown): ResponseStreamLike {
        stream.setContentType(PRELUDE_CONTENT_TYPE);
        // NUL bytes may not appear in the prelude: JSON escapes them.
        const metadata = JSON.stringify(prelude);
        stream._onBeforeFirstWrite = (write) => {
          write(metadata);
          write(DELIMITER);
        };
        return stream;
      },
    },
  });
}

export function isStreamingHandler(handler: unknown): boolean {
  return (
    typeof handler === "function" && (handler as unknown as Record<symbol, unknown>)[STREAMING] === "response"
  );
}

export interface FunctionUrlOptions {
  fn: EmulatedFunction;
  host?: string;
  port?: number;
  /** Overrides the response limits (tests of the limits themselves). */
  limits?: Partial<typeof functionUrlLimits>;
}

export interface RunningFunctionUrl {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startFunctionUrlEmulator(options: FunctionUrlOptions): Promise<RunningFunctionUrl> {
  const urlId = randomBytes(16).toString("hex");
  const limits = { ...functionUrlLimits, ...options.limits };
  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      console.error("[function-url] unexpected failure", error);
      if (!res.headersSent) fail(res, 502, "Internal Server Error");
      else res.destroy();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: Buffer;
    try {
      body = await readBody(req, limits.requestBytes);
    } catch {
      return fail(res, 413, "Request must be smaller than 6291456 bytes for the InvokeFunction operation");
    }
    const url = requestTarget(req.url ?? "/");
    const requestId = randomUUID();
    const event = buildEvent({
      req,
      url,
      method: (req.method ?? "GET").toUpperCase(),
      body,
      routeKey: "$default",
      requestId,
      apiId: urlId,
      pathParameters: undefined,
    });
    event.requestContext.accountId = "anonymous";

    await options.fn.init?.();
    if (!isStreamingHandler(options.fn.handler))
      throw new Error(`${options.fn.name} is not a streaming handler`);
    const output = new ClientOutput(res, requestId, limits);
    const stream = new FunctionResponseStream(output);
    const started = Date.now();
    const timeoutMs = options.fn.timeoutSeconds * 1000;
    const context: LambdaContext = {
      functionName: options.fn.name,
      functionVersion: "$LATEST",
      invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${options.fn.name}`,
      memoryLimitInMB: String(options.fn.memoryMb),
      awsRequestId: requestId,
      logGroupName: `/aws/lambda/${options.fn.name}`,
      logStreamName: "local",
      callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
    };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    // Lambda serialises events: the handler gets its own copy, as over the wire.
    const run = Promise.resolve().then(() =>
      (options.fn.handler as unknown as StreamingHandler)(JSON.parse(JSON.stringify(event)), stream, context),
    );
    try {
      const outcome = await Promise.race([run.then(() => "done" as const), timedOut]);
      if (outcome === "timeout") {
        console.error(`[function-url] ${options.fn.name} timed out after ${options.fn.timeoutSeconds} s`);
        output.cut();
        return;
      }
      stream.end();
      await output.finished();
    } catch (error) {
      console.error(`[function-url] ${options.fn.name} failed:`, error);
      if (output.started) output.cut();
      else fail(res, 502, "Internal Server Error");
    } finally {
      clearTimeout(timer);
      run.catch(() => undefined);
    }
  }

  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://${options.host ?? "127.0.0.1"}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

type StreamingHandler = (event: unknown, stream: Writable, context: LambdaContext) => Promise<unknown>;

/** An answer of Lambda's own (the function's code never ran, or failed before writing), with Lambda's request id header. */
function fail(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ Message: message });
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-amzn-requestid": randomUUID(),
  });
  res.end(body);
}

/**
 * The stream a streaming handler writes to, as the runtime hands it over: `setContentType` before
 * the first write, `_onBeforeFirstWrite` (HttpResponseStream.from's prelude), then bytes.
 */
class FunctionResponseStream extends Writable implements ResponseStreamLike {
  _onBeforeFirstWrite?: (write: (chunk: Uint8Array | string) => void) => void;
  private contentType = "application/octet-stream";
  private written = false;

  constructor(private readonly output: ClientOutput) {
    super();
  }

  setContentType(type: string): void {
    if (this.written) throw new Error("Cannot set content-type, too late.");
    this.contentType = type;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.written) {
      this.written = true;
      this.output.begin(this.contentType);
      this._onBeforeFirstWrite?.((piece) => this.output.push(Buffer.from(piece)));
    }
    this.output.push(chunk).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.written) {
      this.written = true;
      this.output.begin(this.contentType);
      this._onBeforeFirstWrite?.((piece) => this.output.push(Buffer.from(piece)));
    }
    this.output.end().then(() => callback(), callback);
  }
}

/**
 * The client's side: reads the prelude (when the content type says there is one), then forwards the
 * body as it comes, within the size and bandwidth limits; once the client is gone, bytes are dropped.
 */
class ClientOutput {
  started = false;
  private prelude: Buffer | undefined;
  private sent = 0;
  private cappedSince: number | undefined;
  private readonly done = Promise.withResolvers<void>();

  constructor(
    private readonly res: ServerResponse,
    private readonly requestId: string,
    private readonly limits: typeof functionUrlLimits,
  ) {
    res.on("close", () => this.done.resolve());
  }

  begin(contentType: string): void {
    if (contentType === PRELUDE_CONTENT_TYPE) this.prelude = Buffer.alloc(0);
    else this.head(200, { "content-type": contentType }, []);
  }

  async push(chunk: Buffer): Promise<void> {
    if (this.prelude !== undefined) {
      const buffered = Buffer.concat([this.prelude, chunk]);
      const at = buffered.indexOf(DELIMITER);
      if (at === -1) {
        this.prelude = buffered;
        return;
      }
      const metadata = JSON.parse(buffered.subarray(0, at).toString("utf8")) as {
        statusCode?: number;
        headers?: Record<string, string>;
        cookies?: string[];
      };
      this.prelude = undefined;
      this.head(metadata.statusCode ?? 200, metadata.headers ?? {}, metadata.cookies ?? []);
      const rest = buffered.subarray(at + DELIMITER.length);
      if (rest.length > 0) await this.push(rest);
      return;
    }
    if (this.res.destroyed || this.res.writableEnded) return;
    if (this.sent + chunk.length > this.limits.responseBytes) {
      console.error("[function-url] response over 200 MB: the stream is cut");
      this.cut();
      return;
    }
    await this.paceFor(chunk.length);
    this.sent += chunk.length;
    if (!this.res.destroyed) this.res.write(chunk);
  }

  async end(): Promise<void> {
    if (!this.started) this.head(200, { "content-type": "application/octet-stream" }, []);
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }

  finished(): Promise<void> {
    return this.done.promise;
  }

  cut(): void {
    this.res.destroy();
  }

  private head(status: number, headers: Record<string, string>, cookies: string[]): void {
    if (this.started) return;
    this.started = true;
    if (this.res.destroyed) return;
    const lower: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = String(value);
    if (cookies.length > 0) lower["set-cookie"] = cookies;
    lower["x-amzn-requestid"] = this.requestId;
    this.res.writeHead(status, lower);
    // Headers go out now, not with the first body bytes.
    this.res.flushHeaders();
  }

  /** Past the uncapped first bytes, a response streams at the capped rate. */
  private async paceFor(bytes: number): Promise<void> {
    const over = this.sent + bytes - this.limits.uncappedBytes;
    if (over <= 0) return;
    this.cappedSince ??= Date.now();
    const due = this.cappedSince + (over / this.limits.cappedBytesPerSecond) * 1000;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
