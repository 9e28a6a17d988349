/**
 * The local S3: fauxqs's S3 (the same pure-JS server as the local SQS: real S3 REST and XML, so
 * the real `@aws-sdk/client-s3` talks to it, path-style) behind a small front that adds what S3
 * itself does around a bucket and fauxqs does not:
 *
 *  - presigned URLs are checked as S3 checks them: a request carrying `X-Amz-Signature` must be
 *    signed (SigV4, query form) by the local credentials, not expired, and its signed headers
 *    (`content-length`, `content-type`) must be the ones sent; otherwise `403` with S3's XML error.
 *    Requests signed in the `Authorization` header (the SDK's own calls) pass as they are;
 *  - the bucket's CORS rules (lib/knowledge-pipeline.ts), for the console's uploads from a browser:
 *    preflights answered, allowed origins echoed, anything else refused as S3 refuses it;
 *  - the bucket's event notification: after an object is created under the notification's prefix
 *    (PutObject, CopyObject, CompleteMultipartUpload), S3's event message (`Records[]` with
 *    `eventName`, `s3.bucket`, `s3.object` key URL-encoded, size, eTag, sequencer) is sent to the
 *    configured queue, and an `s3:TestEvent` once when the bucket is first set up, as S3 does.
 *
 * The bucket itself is created with the definition's lifecycle rule (stored, not enforced by
 * fauxqs). Not emulated: POST form uploads' notifications (nothing here uses them), encryption
 * (fauxqs stores plain bytes), and S3's at-least-once duplicate events.
 */
import { createHash, createHmac, type Hash, type Hmac, randomBytes } from "node:crypto";
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import {
  CreateBucketCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutBucketLifecycleConfigurationCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { S3RequestPresigner } from "@aws-sdk/s3-request-presigner";
import { HttpRequest } from "@smithy/core/protocols";
import type { BucketDefinition } from "../knowledge-pipeline.ts";

export interface LocalS3Options {
  /** fauxqs's endpoint. */
  upstream: string;
  definition: BucketDefinition;
  bucketName: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The origins the bucket's CORS rules allow (the console's), read on every request. */
  allowedOrigins: () => readonly string[];
  /** Sends an event notification's body to the definition's queue. */
  notify: (body: string) => Promise<void>;
  host?: string;
  port?: number;
  /** Whatever went wrong sending a notification (logged; S3 does not fail the upload for it). */
  onError?: (message: string, error: unknown) => void;
}

export interface RunningS3 {
  /** Where clients send S3 requests (path-style): this front. */
  endpoint: string;
  bucketName: string;
  stop(): Promise<void>;
}

export async function startLocalS3(options: LocalS3Options): Promise<RunningS3> {
  const direct = new S3Client({
    endpoint: options.upstream,
    region: options.region,
    credentials: options.credentials,
    forcePathStyle: true,
  });
  // Kept from an earlier run (a data directory), or new.
  const created = await direct.send(new HeadBucketCommand({ Bucket: options.bucketName })).then(
    () => false,
    () => true,
  );
  if (created) await direct.send(new CreateBucketCommand({ Bucket: options.bucketName }));
  await direct.send(
    new PutBucketLifecycleConfigurationCommand({
      Bucket: options.bucketName,
      LifecycleConfiguration: {
        Rules: [
          {
            ID: "abort-incomplete-multipart-uploads",
            Status: "Enabled",
            Filter: { Prefix: "" },
            AbortIncompleteMultipartUpload: {
              DaysAfterInitiation: options.definition.lifecycle.abortIncompleteMultipartUploadDays,
            },
          },
        ],
      },
    }),
  );
  if (created) {
    // S3 sends this when a notification configuration is put on a bucket.
    await options.notify(
      JSON.stringify({
        Service: "Amazon S3",
        Event: "s3:TestEvent",
        Time: new Date().toISOString(),
        Bucket: options.bucketName,
        RequestId: randomBytes(8).toString("hex").toUpperCase(),
        HostId: randomBytes(24).toString("base64"),
      }),
    );
  }

  const presigner = new S3RequestPresigner({
    credentials: options.credentials,
    region: options.region,
    sha256: NodeSha256,
  });
  let sequence = 0;

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      options.onError?.("local S3 front failed", error);
      if (!res.headersSent) sendError(res, 500, "InternalError", "We encountered an internal error.");
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://local");
    const origin = req.headers.origin;
    const corsAllowed = origin !== undefined && options.allowedOrigins().includes(origin);
    if (req.method === "OPTIONS") return preflight(req, res, corsAllowed);
    if (corsAllowed) {
      res.setHeader("access-control-allow-origin", origin);
      res.setHeader("access-control-expose-headers", options.definition.cors.exposedHeaders.join(", "));
      res.setHeader("vary", "Origin");
    }
    if (url.searchParams.has("X-Amz-Signature")) {
      const refusal = await checkPresigned(req, url);
      if (refusal) {
        req.resume();
        return sendError(res, 403, refusal.code, refusal.message);
      }
    }
    const answer = await forward(req, res);
    const created = createdObject(req, url, answer);
    if (created) await announce(created);
  }

  function preflight(req: IncomingMessage, res: ServerResponse, corsAllowed: boolean): void {
    const method = String(req.headers["access-control-request-method"] ?? "");
    const requested = String(req.headers["access-control-request-headers"] ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean);
    const { cors } = options.definition;
    const headersAllowed = requested.every((name) => cors.allowedHeaders.includes(name));
    if (!corsAllowed || !(cors.allowedMethods as readonly string[]).includes(method) || !headersAllowed) {
      sendError(res, 403, "AccessForbidden", "CORSResponse: This CORS request is not allowed.");
      return;
    }
    res.writeHead(200, {
      "access-control-allow-origin": String(req.headers.origin),
      "access-control-allow-methods": cors.allowedMethods.join(", "),
      ...(requested.length > 0 ? { "access-control-allow-headers": requested.join(", ") } : {}),
      "access-control-max-age": String(cors.maxAgeSeconds),
      vary: "Origin, Access-Control-Request-Headers, Access-Control-Request-Method",
    });
    res.end();
  }

  /** Why S3 would refuse this presigned request, or undefined when it is good. */
  async function checkPresigned(
    req: IncomingMessage,
    url: URL,
  ): Promise<{ code: string; message: string } | undefined> {
    const query = url.searchParams;
    const credential = (query.get("X-Amz-Credential") ?? "").split("/");
    if (credential[0] !== options.credentials.accessKeyId) {
      return {
        code: "InvalidAccessKeyId",
        message: "The AWS Access Key Id you provided does not exist in our records.",
      };
    }
    const signingDate = parseAmzDate(query.get("X-Amz-Date") ?? "");
    const expiresIn = Number(query.get("X-Amz-Expires"));
    if (!signingDate || !Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > 604_800) {
      return { code: "AuthorizationQueryParametersError", message: "Invalid presigned URL parameters." };
    }
    if (Date.now() > signingDate.getTime() + expiresIn * 1000) {
      return { code: "AccessDenied", message: "Request has expired" };
    }
    const signedHeaders = (query.get("X-Amz-SignedHeaders") ?? "").split(";").filter(Boolean);
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) {
      const value = headerValue(req.headers, name);
      if (value === undefined) return signatureMismatch;
      headers[name] = value;
    }
    const unsigned: Record<string, string> = {};
    for (const [name, value] of query) if (name !== "X-Amz-Signature") unsigned[name] = value;
    const [hostname = "", port] = (req.headers.host ?? "").split(":");
    const presigned = await presigner.presign(
      new HttpRequest({
        method: req.method ?? "GET",
        protocol: "http:",
        hostname,
        ...(port ? { port: Number(port) } : {}),
        path: url.pathname,
        query: unsigned,
        headers,
      }),
      { signingDate, expiresIn, signableHeaders: new Set(signedHeaders) },
    );
    return presigned.query?.["X-Amz-Signature"] === query.get("X-Amz-Signature")
      ? undefined
      : signatureMismatch;
  }

  /** Passes the request to fauxqs and its answer back; resolves with the status once sent. */
  function forward(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const upstream = new URL(options.upstream);
    return new Promise<number>((resolve, reject) => {
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined && name !== "host" && name !== "connection") headers[name] = value;
      }
      const proxied = httpRequest(
        {
          hostname: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...headers, host: upstream.host },
        },
        (answer) => {
          const passed: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value !== undefined && name !== "connection" && name !== "transfer-encoding")
              passed[name] = value;
          }
          res.writeHead(answer.statusCode ?? 502, passed);
          answer.pipe(res);
          answer.on("end", () => resolve(answer.statusCode ?? 502));
          answer.on("error", reject);
        },
      );
      proxied.on("error", reject);
      req.pipe(proxied);
    });
  }

  function createdObject(
    req: IncomingMessage,
    url: URL,
    status: number,
  ): { key: string; eventName: string } | undefined {
    if (status < 200 || status > 299) return undefined;
    const [, bucket, ...rest] = url.pathname.split("/");
    if (bucket !== options.bucketName || rest.length === 0) return undefined;
    const key = decodeURIComponent(rest.join("/"));
    if (!key.startsWith(options.definition.notification.prefix)) return undefined;
    if (
      req.method === "PUT" &&
      !url.searchParams.has("partNumber") &&
      !url.searchParams.has("renameObject")
    ) {
      return {
        key,
        eventName: req.headers["x-amz-copy-source"] ? "ObjectCreated:Copy" : "ObjectCreated:Put",
      };
    }
    if (req.method === "POST" && url.searchParams.has("uploadId")) {
      return { key, eventName: "ObjectCreated:CompleteMultipartUpload" };
    }
    return undefined;
  }

  async function announce(created: { key: string; eventName: string }): Promise<void> {
    try {
      const head = await direct.send(new HeadObjectCommand({ Bucket: options.bucketName, Key: created.key }));
      sequence += 1;
      const record = {
        eventVersion: "2.1",
        eventSource: "aws:s3",
        awsRegion: options.region,
        eventTime: new Date().toISOString(),
        eventName: created.eventName,
        userIdentity: { principalId: "AWS:LOCAL" },
        requestParameters: { sourceIPAddress: "127.0.0.1" },
        responseElements: {
          "x-amz-request-id": randomBytes(8).toString("hex").toUpperCase(),
          "x-amz-id-2": randomBytes(24).toString("base64"),
        },
        s3: {
          s3SchemaVersion: "1.0",
          configurationId: "uploads",
          bucket: {
            name: options.bucketName,
            ownerIdentity: { principalId: "LOCAL" },
            arn: `arn:aws:s3:::${options.bucketName}`,
          },
          object: {
            // S3 URL-encodes the key in event messages (a space becomes "+").
            key: encodeURIComponent(created.key).replace(/%2F/g, "/").replace(/%20/g, "+"),
            size: head.ContentLength ?? 0,
            eTag: (head.ETag ?? "").replace(/"/g, ""),
            sequencer: `${Date.now().toString(16).toUpperCase()}${String(sequence).padStart(8, "0")}`,
          },
        },
      };
      await options.notify(JSON.stringify({ Records: [record] }));
    } catch (error) {
      options.onError?.("local S3 event notification failed", error);
    }
  }

  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${options.host ?? "127.0.0.1"}:${port}`,
    bucketName: options.bucketName,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      direct.destroy();
    },
  };
}

const signatureMismatch = {
  code: "SignatureDoesNotMatch",
  message: "The request signature we calculated does not match the signature you provided.",
};

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** `20261121T101500Z` → a Date. */
function parseAmzDate(text: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number);
  return new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day, hour, minute, second));
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>${randomBytes(8).toString("hex").toUpperCase()}</RequestId></Error>`;
  res.writeHead(status, { "content-type": "application/xml" });
  res.end(body);
}

type SourceData = string | ArrayBuffer | ArrayBufferView;

const bytesOf = (data: SourceData): Buffer =>
  typeof data === "string"
    ? Buffer.from(data, "utf8")
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 (and its HMAC, given a secret) for the SigV4 signer, from node:crypto. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash("sha256") : createHmac("sha256", bytesOf(this.secret));
  }
}
