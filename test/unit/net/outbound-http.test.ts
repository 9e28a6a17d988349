/**
 * The outbound client and its connect-time guard, against local listeners: a "trap" that must never
 * be connected to (not on the allow list) and a server that is allowed by its exact endpoint.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BlockedAddressError, type ResolveHost } from "#functions/net/outbound-address";
import { createOutboundClient, ResponseTooLargeError } from "#functions/net/outbound-http";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

let handler: Handler;
let received: { method: string; url: string; headers: IncomingMessage["headers"]; body: string }[] = [];
const allowedServer = createHttpServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    handler(req, res, body);
  });
});
let allowedPort = 0;

/** Listens on 127.0.0.1 and ::1 on one port and counts the connections it is offered. */
let trapConnections = 0;
let trapPort = 0;
const trapServers: Server[] = [];
const trapSockets = new Set<Socket>();

beforeAll(async () => {
  await new Promise<void>((resolve) => allowedServer.listen(0, "127.0.0.1", resolve));
  allowedPort = (allowedServer.address() as AddressInfo).port;
  const onConnection = (socket: Socket) => {
    trapConnections++;
    trapSockets.add(socket);
    socket.destroy();
  };
  const first = createServer(onConnection);
  await new Promise<void>((resolve) => first.listen(0, "127.0.0.1", resolve));
  trapPort = (first.address() as AddressInfo).port;
  trapServers.push(first);
  const second = createServer(onConnection);
  const listening = await new Promise<boolean>((resolve) => {
    second.once("error", () => resolve(false));
    second.listen(trapPort, "::1", () => resolve(true));
  });
  if (listening) trapServers.push(second);
});

afterAll(async () => {
  allowedServer.closeAllConnections();
  for (const socket of trapSockets) socket.destroy();
  await Promise.all(
    [allowedServer, ...trapServers].map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

beforeEach(() => {
  received = [];
  trapConnections = 0;
  handler = (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
});

const signal = () => AbortSignal.timeout(5_000);
const allowed = () => [{ address: "127.0.0.1", port: allowedPort }];

async function refusal(promise: Promise<unknown>): Promise<BlockedAddressError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(BlockedAddressError);
  return error as BlockedAddressError;
}

describe("the connect-time guard", () => {
  it.each([
    "http://127.0.0.1:TRAP/",
    "http://127.0.0.2:TRAP/",
    "http://[::1]:TRAP/",
    "http://[0:0:0:0:0:0:0:1]:TRAP/",
    "http://[::ffff:7f00:1]:TRAP/",
    "http://[0:0:0:0:0:ffff:7f00:1]:TRAP/",
    "http://[::ffff:127.0.0.1]:TRAP/",
    "http://[::127.0.0.1]:TRAP/",
    "http://2130706433:TRAP/",
    "http://0x7f.1:TRAP/",
    "http://0177.0.0.1:TRAP/",
    "http://127.1:TRAP/",
    "http://localhost:TRAP/",
    "https://[::ffff:7f00:1]:TRAP/",
    "https://localhost:TRAP/",
  ])("refuses %s before connecting", async (template) => {
    const send = createOutboundClient({ allowPrivate: allowed() });
    const url = new URL(template.replace("TRAP", String(trapPort)));

    await refusal(send({ url, signal: signal() }));

    expect(trapConnections).toBe(0);
  });

  it("refuses a name whose addresses include a refused one, before connecting", async () => {
    const resolve: ResolveHost = async () => [
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ];
    const send = createOutboundClient({ allowPrivate: [{ address: "::1", port: trapPort }], resolve });

    const error = await refusal(send({ url: new URL(`http://shop.test:${trapPort}/`), signal: signal() }));

    expect(error.address).toBe("127.0.0.1");
    expect(error.reason).toContain("127.0.0.0/8 loopback");
    expect(trapConnections).toBe(0);
  });

  it("resolves once per connection and connects to what it checked: no second answer can rebind", async () => {
    // A rebinding resolver: the allowed server's address first, a refused one (::1) on every later call.
    let calls = 0;
    const resolve: ResolveHost = async () => {
      calls++;
      return calls === 1 ? [{ address: "127.0.0.1", family: 4 }] : [{ address: "::1", family: 6 }];
    };
    const send = createOutboundClient({ allowPrivate: allowed(), resolve });

    const first = await send({ url: new URL(`http://rebind.test:${allowedPort}/first`), signal: signal() });
    const callsForFirst = calls;
    const second = send({ url: new URL(`http://rebind.test:${allowedPort}/second`), signal: signal() });

    // One lookup for the first request (the one it connected with), and the second one refused.
    expect(first.status).toBe(200);
    expect(callsForFirst).toBe(1);
    await refusal(second);
    expect(calls).toBe(2);
    expect(received.map((request) => request.url)).toEqual(["/first"]);
  });

  it("allows an endpoint only on its exact address and port", async () => {
    const send = createOutboundClient({ allowPrivate: [{ address: "127.0.0.1", port: allowedPort + 1 }] });

    await refusal(send({ url: new URL(`http://127.0.0.1:${allowedPort}/`), signal: signal() }));
    await refusal(send({ url: new URL(`http://[::ffff:7f00:1]:${allowedPort}/`), signal: signal() }));

    expect(received).toEqual([]);
  });

  it("passes DNS failures through as they are", async () => {
    const resolve: ResolveHost = async () => [];
    const send = createOutboundClient({ resolve });

    const error = await send({ url: new URL("https://nowhere.test/"), signal: signal() }).catch(
      (reason: unknown) => reason,
    );

    expect((error as NodeJS.ErrnoException).code).toBe("ENOTFOUND");
  });
});

describe("requests and responses", () => {
  it("sends a POST with its body, and reads the answer", async () => {
    const send = createOutboundClient({ allowPrivate: allowed() });

    const response = await send({
      url: new URL(`http://127.0.0.1:${allowedPort}/hook`),
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"type":"message.created"}',
      signal: signal(),
    });

    expect(response.status).toBe(200);
    expect(new TextDecoder().decode(await response.read(1_000))).toBe('{"ok":true}');
    expect(received).toEqual([
      expect.objectContaining({ method: "POST", url: "/hook", body: '{"type":"message.created"}' }),
    ]);
    expect(received[0]?.headers["content-length"]).toBe("26");
  });

  it("never follows a redirect", async () => {
    handler = (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${trapPort}/` }).end();
    const send = createOutboundClient({ allowPrivate: allowed() });

    const response = await send({ url: new URL(`http://127.0.0.1:${allowedPort}/`), signal: signal() });
    response.discard();

    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe(`http://127.0.0.1:${trapPort}/`);
    expect(trapConnections).toBe(0);
  });

  it("decompresses, and caps the decompressed size (no bomb gets past the cap)", async () => {
    const json = JSON.stringify({ items: ["a", "b"] });
    const bomb = gzipSync(Buffer.alloc(5_000_000));
    const send = createOutboundClient({ allowPrivate: allowed() });
    const url = new URL(`http://127.0.0.1:${allowedPort}/`);

    handler = (_req, res) => res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync(json));
    const small = await (await send({ url, signal: signal() })).read(1_000);
    handler = (_req, res) => res.writeHead(200, { "content-encoding": "gzip" }).end(bomb);
    const large = await (await send({ url, signal: signal() }))
      .read(1_000_000)
      .catch((error: unknown) => error);

    expect(new TextDecoder().decode(small)).toBe(json);
    expect(bomb.byteLength).toBeLessThan(1_000_000);
    expect(large).toBeInstanceOf(ResponseTooLargeError);
  });

  it("refuses a declared length over the cap without reading, and keeps a prefix on request", async () => {
    handler = (_req, res) => res.writeHead(200, { "content-length": "5000" }).end("x".repeat(5_000));
    const send = createOutboundClient({ allowPrivate: allowed() });
    const url = new URL(`http://127.0.0.1:${allowedPort}/`);

    const refused = await (await send({ url, signal: signal() }))
      .read(1_000)
      .catch((error: unknown) => error);
    const prefix = await (await send({ url, signal: signal() })).readPrefix(1_024);

    expect(refused).toBeInstanceOf(ResponseTooLargeError);
    expect(prefix.byteLength).toBe(1_024);
  });

  it("refuses other schemes and credentials in the URL before connecting", async () => {
    const send = createOutboundClient({ allowPrivate: allowed() });

    await expect(send({ url: new URL("file:///etc/passwd"), signal: signal() })).rejects.toThrow(TypeError);
    await expect(
      send({ url: new URL(`http://user:pass@127.0.0.1:${allowedPort}/`), signal: signal() }),
    ).rejects.toThrow(TypeError);
    expect(received).toEqual([]);
  });

  it("ends with the caller's signal", async () => {
    handler = () => undefined;
    const send = createOutboundClient({ allowPrivate: allowed() });

    const error = await send({
      url: new URL(`http://127.0.0.1:${allowedPort}/slow`),
      signal: AbortSignal.timeout(100),
    }).catch((reason: unknown) => reason);

    expect((error as Error).name).toMatch(/Abort|Timeout/);
  });
});
