/**
 * The widget's pure rules: which routes a visitor's token may call (the route table and each
 * handler's contract agree), allowed origins as stored and as matched, the client address a
 * session bucket is keyed by, and a visitor's verdict surviving the authorizer's context.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { normalizeAllowedOrigin, originAllowed } from "#functions/domain/widget-settings";
import type { RouteContract } from "#functions/http/api-handler";
import { readAuthorizerContext, toAuthorizerContext, visitorOf } from "#functions/http/authorizer-context";
import { addressKey, clientAddress } from "#functions/http/client-address";
import { installLambdaStreamingGlobals } from "#lib/local/function-url-emulator";
import { routes, streamRoute, widgetPaths, widgetRouteKinds } from "#lib/routes";

const root = resolve(import.meta.dirname, "../../..");

describe("the widget's routes", () => {
  it("are declared alike in the route table and in each handler's contract", async () => {
    // The stream handler asks Lambda's runtime for its streaming globals as it loads.
    installLambdaStreamingGlobals();
    for (const route of [...routes, streamRoute]) {
      const { contract } = (await import(pathToFileURL(resolve(root, route.entry)).href)) as {
        contract: RouteContract;
      };
      expect([route.id, contract.widget]).toEqual([route.id, route.widget]);
    }
  });

  it("are exactly the contract's visitor routes, messages drawing on the message bucket", () => {
    expect(Object.fromEntries(widgetRouteKinds)).toEqual({
      "POST /api/conversation": "requests",
      "POST /api/message": "messages",
      "POST /api/message/stream": "messages",
      "GET /api/conversation/{conversation_id}": "requests",
      "GET /api/conversation/{conversation_id}/messages": "requests",
      "POST /api/conversation/{conversation_id}/handoff": "requests",
      "POST /api/message/{message_id}/feedback": "requests",
    });
    expect(Object.fromEntries(widgetPaths)).toEqual({
      "/api/conversation": ["POST"],
      "/api/message": ["POST"],
      "/api/conversation/{conversation_id}": ["GET"],
      "/api/conversation/{conversation_id}/messages": ["GET"],
      "/api/conversation/{conversation_id}/handoff": ["POST"],
      "/api/message/{message_id}/feedback": ["POST"],
      "/api/widget/session": ["POST"],
    });
    for (const path of widgetPaths.keys()) expect(path.startsWith("/manage")).toBe(false);
  });
});

describe("allowed origins", () => {
  it("are stored normalised, and anything but an origin is refused", () => {
    expect(normalizeAllowedOrigin("https://Shop.Example")).toBe("https://shop.example");
    expect(normalizeAllowedOrigin("https://shop.example:443/")).toBe("https://shop.example");
    expect(normalizeAllowedOrigin("http://localhost:8080")).toBe("http://localhost:8080");
    expect(normalizeAllowedOrigin("https://*.Shop.example")).toBe("https://*.shop.example");
    for (const bad of [
      "shop.example",
      "ftp://shop.example",
      "https://shop.example/path",
      "https://user@shop.example",
      "https://*",
      "https://*.*.shop.example",
      "https://shop.*.example",
      "https://*.10.0.0.1",
      "https://shop.example?x=1",
      "",
    ]) {
      expect(normalizeAllowedOrigin(bad), bad).toBeUndefined();
    }
  });

  it("match exactly, or by one leading label", () => {
    const allowed = ["https://shop.example", "https://*.eu.shop.example", "http://localhost:8080"];
    expect(originAllowed(allowed, "https://shop.example")).toBe(true);
    expect(originAllowed(allowed, "https://SHOP.example:443")).toBe(true);
    expect(originAllowed(allowed, "https://de.eu.shop.example")).toBe(true);
    expect(originAllowed(allowed, "http://localhost:8080")).toBe(true);
    for (const origin of [
      "https://eu.shop.example",
      "https://a.de.eu.shop.example",
      "https://evil-eu.shop.example",
      "http://shop.example",
      "https://shop.example.evil",
      "http://localhost",
      "null",
      undefined,
    ]) {
      expect(originAllowed(allowed, origin), String(origin)).toBe(false);
    }
  });
});

describe("the client address of a session", () => {
  const secret = "s3cret-of-the-origin";
  it("is API Gateway's source address, unless the console's host proves it sent the viewer's", () => {
    expect(clientAddress({}, "203.0.113.7", secret)).toBe("203.0.113.7");
    const viaHost = { "x-viewer-address": "198.51.100.4", "x-origin-verify": secret };
    expect(clientAddress(viaHost, "10.0.0.1", secret)).toBe("198.51.100.4");
    // Without the proof (or with a wrong one) the header is anyone's to send: ignored.
    expect(clientAddress({ "x-viewer-address": "198.51.100.4" }, "203.0.113.7", secret)).toBe("203.0.113.7");
    expect(
      clientAddress(
        { "x-viewer-address": "198.51.100.4", "x-origin-verify": "guess" },
        "203.0.113.7",
        secret,
      ),
    ).toBe("203.0.113.7");
    expect(
      clientAddress(
        { "x-viewer-address": "2001:db8:a:b:c:d:e:f", "x-origin-verify": secret },
        "1.2.3.4",
        secret,
      ),
    ).toBe("2001:db8:a:b::/64");
  });

  it("counts IPv6 addresses by their /64", () => {
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("2001:0db8:0001:0002:0003::9")).toBe("2001:db8:1:2::/64");
    expect(addressKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("192.0.2.1")).toBe("192.0.2.1");
  });
});

describe("a visitor's verdict", () => {
  it("reaches the integration with its visitor, whether the gateway keeps types or not", () => {
    const context = toAuthorizerContext({
      kind: "rate_limited",
      organizationId: "org-1",
      keyId: "visitor:abc",
      scope: "chat",
      rate: { limit: 10, remaining: 0, resetAt: 1_800_000_000 },
      retryAfterSeconds: 6,
      visitor: { visitorId: "abc", chatbotId: "bot-1", contactId: "contact-1" },
      limitKind: "visitor_messages",
    });
    const strings = Object.fromEntries(Object.entries(context).map(([key, value]) => [key, String(value)]));
    for (const shape of [context, strings]) {
      const read = readAuthorizerContext(shape);
      expect(read).toMatchObject({ outcome: "rate_limited", limitKind: "visitor_messages", retryAfter: 6 });
      expect(read && read.outcome === "rate_limited" ? visitorOf(read) : undefined).toEqual({
        visitorId: "abc",
        chatbotId: "bot-1",
        contactId: "contact-1",
      });
    }
    // Part of a visitor is no verdict at all.
    expect(readAuthorizerContext({ ...context, visitorContactId: undefined })).toBeUndefined();
  });
});
