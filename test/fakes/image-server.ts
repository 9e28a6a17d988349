/**
 * A local https image server with a certificate made at test time (see self-signed-cert.ts),
 * answering `images.test`, `localhost` and 127.0.0.1. Each test installs its own handler and can
 * see whether a response was cut off by the client (`aborted`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { createSelfSignedCertificate } from "#test/fakes/self-signed-cert";

export type ImageHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface FakeImageServer {
  port: number;
  /** The PEM certificate to trust. */
  ca: string;
  /** `https://images.test:<port><path>` */
  url(path: string, host?: string): string;
  handle(handler: ImageHandler): void;
  /** Paths requested, in order. */
  requests: string[];
  /** Responses the client hung up on before they ended. */
  aborted: number;
  close(): Promise<void>;
}

export const fakeImageHost = "images.test";

export async function startFakeImageServer(): Promise<FakeImageServer> {
  const { cert, key } = createSelfSignedCertificate([fakeImageHost, "localhost", "127.0.0.1"]);
  let handler: ImageHandler = (_req, res) => res.writeHead(404).end();
  const state = { requests: [] as string[], aborted: 0 };
  const server = createServer({ cert, key }, (req, res) => {
    state.requests.push(req.url ?? "/");
    res.on("close", () => {
      if (!res.writableFinished) state.aborted++;
    });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    ca: cert,
    url: (path, host = fakeImageHost) => `https://${host}:${port}${path}`,
    handle: (next) => {
      handler = next;
    },
    get requests() {
      return state.requests;
    },
    get aborted() {
      return state.aborted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Small but real image headers: enough for magic-byte sniffing. */
export const sampleImages = {
  png: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(24, 1)]),
  jpeg: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(24, 2)]),
  gif: Buffer.concat([Buffer.from("GIF89a", "ascii"), Buffer.alloc(24, 3)]),
  webp: Buffer.concat([
    Buffer.from("RIFF", "ascii"),
    Buffer.from([24, 0, 0, 0]),
    Buffer.from("WEBPVP8 ", "ascii"),
    Buffer.alloc(16, 4),
  ]),
};
