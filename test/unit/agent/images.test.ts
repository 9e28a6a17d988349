import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AttachmentError,
  type AttachmentFailure,
  type ImageAttachment,
  type ImageFetchOptions,
  MAX_IMAGE_BYTES,
  MAX_IMAGES_PER_MESSAGE,
  resolveImageAttachments,
  sniffImageType,
} from "#functions/agent/images";
import {
  type FakeImageServer,
  fakeImageHost,
  sampleImages,
  startFakeImageServer,
} from "#test/fakes/image-server";

let server: FakeImageServer;
let lookups: string[];

beforeAll(async () => {
  server = await startFakeImageServer();
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  lookups = [];
  server.requests.length = 0;
  server.handle((req, res) => {
    if (req.url === "/cat.png") res.writeHead(200, { "content-type": "image/png" }).end(sampleImages.png);
    else res.writeHead(404).end();
  });
});

/** The test-only allowance: 127.0.0.1 on the fake's port (images.test resolves there, in this lookup only). */
function allowed(extra: Partial<ImageFetchOptions> = {}): ImageFetchOptions {
  return {
    allowPrivate: [{ address: "127.0.0.1", port: server.port }],
    trustedCa: server.ca,
    resolve: async (hostname) => {
      lookups.push(hostname);
      return [{ address: "127.0.0.1", family: 4 }];
    },
    timeoutMs: 2_000,
    ...extra,
  };
}

async function failure(
  attachments: ImageAttachment[],
  options: ImageFetchOptions = allowed(),
): Promise<{ index: number; failure: AttachmentFailure }> {
  const error = await resolveImageAttachments(attachments, options).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(AttachmentError);
  const { index, failure: kind } = error as AttachmentError;
  return { index, failure: kind };
}

const inline = (
  bytes: Buffer,
  mediaType: "image/png" | "image/jpeg" | "image/gif" | "image/webp",
): ImageAttachment => ({
  type: "image",
  data: bytes.toString("base64"),
  media_type: mediaType,
});
const url = (href: string): ImageAttachment => ({ type: "image", url: href });

describe("inline image data", () => {
  it("decodes base64 whose bytes match the declared type", async () => {
    const images = await resolveImageAttachments([
      inline(sampleImages.png, "image/png"),
      inline(sampleImages.webp, "image/webp"),
    ]);
    expect(images).toEqual([
      { mediaType: "image/png", bytes: new Uint8Array(sampleImages.png) },
      { mediaType: "image/webp", bytes: new Uint8Array(sampleImages.webp) },
    ]);
  });

  it.each([
    ["not base64 at all", "this is not base64!"],
    ["wrong length", "iVBORw0KGgo"],
    [
      "line breaks",
      `${sampleImages.png.toString("base64").slice(0, 8)}\n${sampleImages.png.toString("base64").slice(8)}`,
    ],
    ["a data: URL prefix", `data:image/png;base64,${sampleImages.png.toString("base64")}`],
    ["empty", ""],
  ])("refuses %s, naming the attachment's index", async (_case, data) => {
    const attachments: ImageAttachment[] = [
      inline(sampleImages.png, "image/png"),
      { type: "image", data, media_type: "image/png" },
    ];
    expect(await failure(attachments)).toEqual({ index: 1, failure: "invalid_base64" });
  });

  it("refuses bytes that contradict the declared media_type", async () => {
    expect(await failure([inline(sampleImages.jpeg, "image/png")])).toEqual({
      index: 0,
      failure: "type_mismatch",
    });
  });

  it("refuses bytes that are no image we accept", async () => {
    expect(
      await failure([inline(Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"), "image/png")]),
    ).toEqual({
      index: 0,
      failure: "unsupported_type",
    });
  });

  it("refuses data larger than the limit before decoding it", async () => {
    expect(await failure([inline(sampleImages.gif, "image/gif")], { maxBytes: 16 })).toEqual({
      index: 0,
      failure: "too_large",
    });
  });

  it(`refuses more than ${MAX_IMAGES_PER_MESSAGE} attachments`, async () => {
    const five = Array.from({ length: MAX_IMAGES_PER_MESSAGE + 1 }, () =>
      inline(sampleImages.png, "image/png"),
    );
    expect(await failure(five)).toEqual({ index: MAX_IMAGES_PER_MESSAGE, failure: "too_many" });
  });

  it("sniffs all four accepted types", () => {
    expect(Object.values(sampleImages).map((bytes) => sniffImageType(bytes))).toEqual([
      "image/png",
      "image/jpeg",
      "image/gif",
      "image/webp",
    ]);
  });
});

describe("image URLs", () => {
  it("fetches a good https image, connecting to the one address it checked", async () => {
    // Act
    const images = await resolveImageAttachments([url(server.url("/cat.png"))], allowed());
    // Assess: images.test exists only in our lookup, so reaching the server proves the pinned address
    expect(images).toEqual([{ mediaType: "image/png", bytes: new Uint8Array(sampleImages.png) }]);
    expect(lookups).toEqual([fakeImageHost]);
    expect(server.requests).toEqual(["/cat.png"]);
  });

  it("verifies the certificate: without the trusted CA the fetch fails", async () => {
    expect(await failure([url(server.url("/cat.png"))], allowed({ trustedCa: undefined }))).toEqual({
      index: 0,
      failure: "fetch_failed",
    });
  });

  it("refuses http:// before connecting", async () => {
    expect(await failure([url(`http://${fakeImageHost}:${server.port}/cat.png`)])).toEqual({
      index: 0,
      failure: "invalid_url",
    });
    expect(server.requests).toEqual([]);
  });

  it.each([
    "https://127.0.0.1/cat.png",
    "https://localhost/cat.png",
    "https://10.0.0.1/cat.png",
    "https://172.16.5.4/cat.png",
    "https://192.168.1.1/cat.png",
    "https://100.64.0.1/cat.png",
    "https://169.254.169.254/latest/meta-data/",
    "https://0.0.0.0/cat.png",
    "https://224.0.0.1/cat.png",
    "https://[::1]/cat.png",
    "https://[fd00::1]/cat.png",
    "https://[fe80::1]/cat.png",
    "https://[::ffff:127.0.0.1]/cat.png",
    "https://2130706433/cat.png", // 127.0.0.1 written as one number
    "https://0x7f.1/cat.png", // 127.0.0.1 in hex shorthand
  ])("refuses %s as a non-public address", async (href) => {
    const options = allowed({
      resolve: async () => [
        { address: "127.0.0.1", family: 4 },
        { address: "::1", family: 6 },
      ],
    });
    expect(await failure([url(href)], options)).toEqual({ index: 0, failure: "blocked_address" });
  });

  it("refuses a public-looking host name that resolves to a private address", async () => {
    const options = allowed({
      resolve: async () => [
        { address: "93.184.216.34", family: 4 },
        { address: "169.254.169.254", family: 4 },
      ],
    });
    expect(await failure([url("https://cdn.example.com/cat.png")], options)).toEqual({
      index: 0,
      failure: "blocked_address",
    });
  });

  it("limits the test allowance to its port", async () => {
    const options = allowed({ allowPrivate: [{ address: "127.0.0.1", port: server.port + 1 }] });
    expect(await failure([url(server.url("/cat.png"))], options)).toEqual({
      index: 0,
      failure: "blocked_address",
    });
    expect(server.requests).toEqual([]);
  });

  it("follows up to two redirects, checking each target", async () => {
    server.handle((req, res) => {
      if (req.url === "/a") res.writeHead(302, { location: "/b" }).end();
      else if (req.url === "/b") res.writeHead(301, { location: server.url("/cat.png") }).end();
      else if (req.url === "/cat.png") res.writeHead(200).end(sampleImages.png);
      else res.writeHead(307, { location: "/a" }).end();
    });
    const [image] = await resolveImageAttachments([url(server.url("/a"))], allowed());
    expect(image?.mediaType).toBe("image/png");
    expect(lookups).toHaveLength(3);
    expect(await failure([url(server.url("/loop"))])).toEqual({ index: 0, failure: "too_many_redirects" });
  });

  it.each([
    "https://[::ffff:7f00:1]:PORT/cat.png",
    "https://127.0.0.2:PORT/cat.png",
    "https://[::1]:PORT/cat.png",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::ffff:a9fe:a9fe]/latest/meta-data/",
  ])("refuses a redirect to %s (not the allowed endpoint), before connecting", async (target) => {
    server.handle((_req, res) =>
      res.writeHead(302, { location: target.replace("PORT", String(server.port)) }).end(),
    );
    expect(await failure([url(server.url("/redirect"))])).toEqual({ index: 0, failure: "blocked_address" });
    expect(server.requests).toEqual(["/redirect"]);
  });

  it("refuses a redirect to http://", async () => {
    server.handle((_req, res) => res.writeHead(302, { location: `http://${fakeImageHost}/cat.png` }).end());
    expect(await failure([url(server.url("/redirect"))])).toEqual({ index: 0, failure: "invalid_url" });
  });

  it("refuses a declared size over the limit without reading the body", async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { "content-length": String(MAX_IMAGE_BYTES + 1) });
      res.write(sampleImages.png);
    });
    expect(await failure([url(server.url("/huge.png"))])).toEqual({ index: 0, failure: "too_large" });
  });

  it("aborts a streamed body as soon as it passes the limit", async () => {
    // Prepare: an endless chunked body
    server.handle((_req, res) => {
      res.writeHead(200);
      res.write(sampleImages.png);
      const timer = setInterval(() => res.write(Buffer.alloc(16_384)), 2);
      res.on("close", () => clearInterval(timer));
    });
    // Act
    const outcome = await failure([url(server.url("/stream.png"))], allowed({ maxBytes: 100_000 }));
    // Assess
    expect(outcome).toEqual({ index: 0, failure: "too_large" });
    await expect.poll(() => server.aborted, { timeout: 1_000 }).toBeGreaterThan(0);
  });

  it("takes the type from the bytes, not the Content-Type header", async () => {
    server.handle((_req, res) =>
      res.writeHead(200, { "content-type": "image/png" }).end("<html>not an image</html>"),
    );
    expect(await failure([url(server.url("/fake.png"))])).toEqual({ index: 0, failure: "unsupported_type" });
  });

  it("fails on a non-200 answer", async () => {
    expect(await failure([url(server.url("/missing.png"))])).toEqual({ index: 0, failure: "fetch_failed" });
  });

  it("gives up at the time limit", async () => {
    server.handle(() => {
      // never answers
    });
    const started = Date.now();
    expect(await failure([url(server.url("/slow.png"))], allowed({ timeoutMs: 200 }))).toEqual({
      index: 0,
      failure: "timeout",
    });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
