/**
 * The local S3 front (lib/local/s3-local.ts) over fauxqs: presigned URLs checked as S3 checks them
 * (signature, signed size and type, expiry), the bucket's CORS rules, and its event notification
 * into the queue, in S3's message format.
 */
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { knowledgeBucket } from "#lib/knowledge-pipeline";
import { localCredentials, localRegion } from "#lib/local/dynamodb-local";
import { type RunningS3, startLocalS3 } from "#lib/local/s3-local";
import { type RunningSqs, startLocalSqs } from "#lib/local/sqs-local";

let sqs: RunningSqs;
let s3: RunningS3;
let client: S3Client;
let queueUrl: string;
const consoleOrigin = "http://127.0.0.1:3002";

beforeAll(async () => {
  sqs = await startLocalSqs({
    namePrefix: "unit-s3",
    queues: [
      { id: knowledgeBucket.notification.queueId, visibilityTimeoutSeconds: 30, retentionSeconds: 3_600 },
    ],
  });
  queueUrl = sqs.queueUrls.get(knowledgeBucket.notification.queueId) ?? "";
  s3 = await startLocalS3({
    upstream: sqs.endpoint,
    definition: knowledgeBucket,
    bucketName: "unit-knowledge",
    region: localRegion,
    credentials: localCredentials,
    allowedOrigins: () => [consoleOrigin],
    notify: async (body) => {
      await sqs.client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    },
  });
  client = new S3Client({
    endpoint: s3.endpoint,
    region: localRegion,
    credentials: localCredentials,
    forcePathStyle: true,
  });
});
afterAll(async () => {
  client.destroy();
  await s3.stop();
  await sqs.stop();
});

async function receive(): Promise<Record<string, unknown>[]> {
  const result = await sqs.client.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
  );
  return (result.Messages ?? []).map(
    (message) => JSON.parse(message.Body ?? "{}") as Record<string, unknown>,
  );
}

const presign = (key: string, size: number, expiresIn = 600) =>
  getSignedUrl(
    client,
    new PutObjectCommand({ Bucket: s3.bucketName, Key: key, ContentLength: size, ContentType: "text/plain" }),
    { expiresIn, signableHeaders: new Set(["content-length", "content-type"]) },
  );

describe("the local S3", () => {
  it("announces itself to the queue with S3's test event when the bucket is set up", async () => {
    const messages = await receive();
    expect(messages).toContainEqual(
      expect.objectContaining({ Event: "s3:TestEvent", Bucket: "unit-knowledge" }),
    );
  });

  it("takes a presigned PUT of the size and type it was signed for, and announces the new object", async () => {
    const body = "Returns are free within 30 days.";
    const url = await presign("uploads/org-1/bot-1/src-1/up 1", Buffer.byteLength(body));
    const put = await fetch(url, { method: "PUT", body, headers: { "content-type": "text/plain" } });
    expect(put.status).toBe(200);
    const stored = await client.send(
      new GetObjectCommand({ Bucket: s3.bucketName, Key: "uploads/org-1/bot-1/src-1/up 1" }),
    );
    expect(await stored.Body?.transformToString()).toBe(body);
    const [event] = await receive();
    const record = ((event?.Records ?? []) as Record<string, unknown>[])[0] as {
      eventSource: string;
      eventName: string;
      s3: { bucket: { name: string }; object: { key: string; size: number; eTag: string } };
    };
    expect(record.eventSource).toBe("aws:s3");
    expect(record.eventName).toBe("ObjectCreated:Put");
    expect(record.s3.bucket.name).toBe(s3.bucketName);
    // Keys come URL-encoded, as S3 sends them.
    expect(record.s3.object.key).toBe("uploads/org-1/bot-1/src-1/up+1");
    expect(record.s3.object.size).toBe(Buffer.byteLength(body));
    expect(record.s3.object.eTag).toMatch(/^[0-9a-f]{32}$/);
  });

  it("refuses a body of another size, another type, a tampered URL and an expired URL", async () => {
    const url = await presign("uploads/org-1/bot-1/src-2/up", 10);
    const bigger = await fetch(url, {
      method: "PUT",
      body: "12345678901",
      headers: { "content-type": "text/plain" },
    });
    expect(bigger.status).toBe(403);
    expect(await bigger.text()).toContain("<Code>SignatureDoesNotMatch</Code>");
    const otherType = await fetch(url, {
      method: "PUT",
      body: "1234567890",
      headers: { "content-type": "text/html" },
    });
    expect(otherType.status).toBe(403);
    const tampered = await fetch(url.replace("src-2", "src-3"), {
      method: "PUT",
      body: "1234567890",
      headers: { "content-type": "text/plain" },
    });
    expect(tampered.status).toBe(403);
    const expired = await presign("uploads/org-1/bot-1/src-4/up", 10, 1);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const late = await fetch(expired, {
      method: "PUT",
      body: "1234567890",
      headers: { "content-type": "text/plain" },
    });
    expect(late.status).toBe(403);
    expect(await late.text()).toContain("Request has expired");
    // Nothing of these landed, so nothing was announced.
    expect(await receive()).toEqual([]);
  });

  it("does not announce objects outside the notification's prefix", async () => {
    await client.send(
      new PutObjectCommand({ Bucket: s3.bucketName, Key: "passages/org-1/bot-1/src-1.json", Body: "{}" }),
    );
    expect(await receive()).toEqual([]);
  });

  it("answers CORS preflights for the console's origin only, as the bucket's rules say", async () => {
    const preflight = (origin: string, method = "PUT", headers = "content-type") =>
      fetch(`${s3.endpoint}/${s3.bucketName}/uploads/x`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": method,
          "access-control-request-headers": headers,
        },
      });
    const allowed = await preflight(consoleOrigin);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(consoleOrigin);
    expect(allowed.headers.get("access-control-allow-methods")).toBe("PUT");
    expect((await preflight("https://evil.example")).status).toBe(403);
    expect((await preflight(consoleOrigin, "DELETE")).status).toBe(403);
    expect((await preflight(consoleOrigin, "PUT", "x-amz-acl")).status).toBe(403);
  });
});
