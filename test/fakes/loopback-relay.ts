/**
 * A relay on one loopback port that the test runtime's outbound-address guard allows (it is on the
 * runtime's OUTBOUND_ALLOW_PRIVATE list), forwarding `http://127.0.0.1:{relay}/{port}/{path}` to
 * `http://127.0.0.1:{port}/{path}`, streaming both ways. Test files start fakes of their own (the
 * OpenAI-compatible model servers of engines.test.ts, say) on ports the runtime cannot know in
 * advance; through the relay it reaches them while the guard keeps refusing every other loopback
 * address and port (outbound-guard.test.ts). Only the tests run it; the runtime has no such thing.
 */
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface LoopbackRelay {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startLoopbackRelay(): Promise<LoopbackRelay> {
  const server = createServer((incoming, outgoing) => {
    const match = /^\/(\d{1,5})(\/.*)?$/.exec(incoming.url ?? "");
    if (!match) {
      outgoing.writeHead(404).end();
      return;
    }
    const { host: _host, ...headers } = incoming.headers;
    const forwarded = request(
      { host: "127.0.0.1", port: Number(match[1]), path: match[2] ?? "/", method: incoming.method, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", () => {
      if (!outgoing.headersSent) outgoing.writeHead(502);
      outgoing.destroy();
    });
    // A client that gives up (a test's timeout) ends the forwarded request too.
    outgoing.on("close", () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
