/**
 * The webhook POST over the shared outbound client: endpoint URL rules, no redirects, a time limit,
 * a 1 KB excerpt, and the address guard's refusals reported as such.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkEndpointUrl,
  createWebhookPoster,
  type OutboundPolicy,
  outboundPolicyFromEnvironment,
  publicOnly,
} from "#functions/webhooks/outbound";

let server: Server;
let port = 0;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? "");
    req.resume();
    if (req.url === "/redirect") return void res.writeHead(307, { location: "/target" }).end();
    if (req.url === "/hang") return; // never answers
    if (req.url === "/large") return void res.writeHead(200).end("é".repeat(2000));
    if (req.url === "/trickle") {
      res.writeHead(200);
      res.write("partial");
      return; // the body never ends
    }
    res.writeHead(201).end("created");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);

const local = (): OutboundPolicy => ({ allowPrivate: [{ address: "127.0.0.1", port }] });
const post = (path: string, timeoutMs = 2_000, policy = local()) =>
  createWebhookPoster(policy)({ url: `http://127.0.0.1:${port}${path}`, headers: {}, body: "{}", timeoutMs });

describe("endpoint addresses", () => {
  const resolveTo = (...addresses: string[]): OutboundPolicy => ({
    ...publicOnly,
    resolve: async () => addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
  });

  it("accepts https on public addresses only", async () => {
    expect(await checkEndpointUrl("https://hooks.example.com/x", resolveTo("93.184.216.34"))).toBeUndefined();
    expect(
      await checkEndpointUrl("https://hooks.example.com/x", resolveTo("93.184.216.34", "10.0.0.8")),
    ).toBe("blocked_address");
    expect(await checkEndpointUrl("https://internal.example/x", resolveTo("169.254.169.254"))).toBe(
      "blocked_address",
    );
    expect(await checkEndpointUrl("https://[::1]/x", publicOnly)).toBe("blocked_address");
    expect(await checkEndpointUrl("https://[::ffff:127.0.0.1]/x", publicOnly)).toBe("blocked_address");
    expect(await checkEndpointUrl("http://hooks.example.com/x", resolveTo("93.184.216.34"))).toBe(
      "not_https",
    );
    expect(await checkEndpointUrl("https://u:p@hooks.example.com/x", resolveTo("93.184.216.34"))).toBe(
      "credentials_in_url",
    );
    expect(await checkEndpointUrl("nonsense", publicOnly)).toBe("invalid_url");
    expect(
      await checkEndpointUrl("https://nowhere.invalid/x", { ...publicOnly, resolve: async () => [] }),
    ).toBe("unresolved");
  });

  it("lets only exact allow-listed loopback endpoints be private or plain http, and never in a Lambda", async () => {
    const policy = outboundPolicyFromEnvironment({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.1:4000" });
    expect(await checkEndpointUrl("http://127.0.0.1:4000/hook", policy)).toBeUndefined();
    expect(await checkEndpointUrl("http://127.0.0.1:4001/hook", policy)).toBe("not_https");
    expect(await checkEndpointUrl("https://127.0.0.1:4001/hook", policy)).toBe("blocked_address");
    const inLambda = outboundPolicyFromEnvironment({
      OUTBOUND_ALLOW_PRIVATE: "127.0.0.1:4000",
      AWS_LAMBDA_FUNCTION_NAME: "fn",
    });
    expect(inLambda.allowPrivate).toEqual([]);
  });
});

describe("the webhook POST", () => {
  it("answers with the status and the body's first 1 KB", async () => {
    expect(await post("/ok")).toMatchObject({ kind: "answered", status: 201, response: "created" });
    const large = await post("/large");
    expect(large.kind === "answered" && Buffer.byteLength(large.response)).toBeLessThanOrEqual(1024 + 3);
    expect(large.kind === "answered" && large.response.startsWith("éé")).toBe(true);
  });

  it("does not follow a redirect", async () => {
    hits.length = 0;
    expect(await post("/redirect")).toMatchObject({ kind: "answered", status: 307 });
    expect(hits).toEqual(["/redirect"]);
  });

  it("gives up after the time limit", async () => {
    const outcome = await post("/hang", 300);
    expect(outcome.kind).toBe("timeout");
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(290);
  });

  it("keeps a 2xx whose body never ends: the status decides", async () => {
    expect(await post("/trickle", 300)).toMatchObject({ kind: "answered", status: 200 });
  });

  it("never connects to an address outside the policy, over http or https", async () => {
    hits.length = 0;
    expect(await post("/ok", 1_000, { allowPrivate: [] })).toMatchObject({ kind: "blocked_address" });
    const https = await createWebhookPoster(publicOnly)({
      url: `https://127.0.0.1:${port}/ok`,
      headers: {},
      body: "{}",
      timeoutMs: 1_000,
    });
    expect(https).toMatchObject({ kind: "blocked_address" });
    const rebound = await createWebhookPoster({
      allowPrivate: [],
      resolve: async () => [{ address: "127.0.0.1", family: 4 }],
    })({ url: `https://hooks.example.com:${port}/ok`, headers: {}, body: "{}", timeoutMs: 1_000 });
    expect(rebound).toMatchObject({ kind: "blocked_address" });
    expect(hits).toEqual([]);
  });
});
