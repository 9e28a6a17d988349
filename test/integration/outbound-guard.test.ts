/**
 * The outbound-address guard through the whole stack: a local listener that is not on the runtime's
 * allow list must never receive a connection, whatever spelling of a loopback address an image URL
 * or a look-up tool uses, directly or through a redirect. The fakes on the allow list keep working
 * (the image fake here; the platform fakes in lookups.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTrap } from "#test/support/connection-trap";
import {
  api,
  environment,
  isLocal,
  newConversation,
  runtimeLog,
  seedTenant,
  seedTool,
  type Tenant,
  validationItems,
} from "#test/support/harness";

describe.runIf(isLocal)("no fetch reaches a local listener off the allow list", () => {
  let trap: Awaited<ReturnType<typeof startTrap>>;
  let shop: Tenant;

  beforeAll(async () => {
    trap = await startTrap();
    shop = await seedTenant({ chatbot: { fallbackReply: "Sorry, I can't help with that." } });
  });
  afterAll(() => trap.close());

  const loopbackSpellings = (port: number) => [
    `https://127.0.0.1:${port}/cat.png`,
    `https://127.0.0.2:${port}/cat.png`,
    `https://[::ffff:7f00:1]:${port}/cat.png`,
    `https://[0:0:0:0:0:ffff:7f00:1]:${port}/cat.png`,
    `https://[::ffff:127.0.0.1]:${port}/cat.png`,
    `https://[::FFFF:7F00:0001]:${port}/cat.png`,
    `https://[::1]:${port}/cat.png`,
    `https://[0:0:0:0:0:0:0:1]:${port}/cat.png`,
    `https://[::127.0.0.1]:${port}/cat.png`,
    `https://[64:ff9b::7f00:1]:${port}/cat.png`,
    `https://[2002:7f00:1::1]:${port}/cat.png`,
    `https://localhost:${port}/cat.png`,
    `https://2130706433:${port}/cat.png`,
    `https://0x7f000001:${port}/cat.png`,
    `https://0177.0.0.1:${port}/cat.png`,
    `https://127.1:${port}/cat.png`,
    `https://[::ffff:a9fe:a9fe]:${port}/latest/meta-data/`,
  ];

  it("refuses image URLs spelling a loopback or metadata address, before connecting", async () => {
    const conversationId = await newConversation(shop);
    for (const url of loopbackSpellings(trap.port)) {
      const response = await api.sendMessage(shop.apiKey, {
        conversation_id: conversationId,
        message: "look",
        attachments: [{ type: "image", url }],
      });

      expect(response.status, `${url}: ${response.text}`).toBe(422);
      expect(validationItems(response)[0], url).toMatchObject({
        loc: ["body", "attachments", 0, "url"],
        ctx: { error: "blocked_address" },
      });
    }
    expect(trap.connections()).toBe(0);
  });

  it("refuses a redirect from an allowed host to the listener, before connecting", async () => {
    const conversationId = await newConversation(shop);
    for (const target of [
      `https://[::ffff:7f00:1]:${trap.port}/cat.png`,
      `https://localhost:${trap.port}/`,
    ]) {
      const url = `${environment.imageBaseUrl}/redirect?to=${encodeURIComponent(target)}`;
      const response = await api.sendMessage(shop.apiKey, {
        conversation_id: conversationId,
        message: "look",
        attachments: [{ type: "image", url }],
      });

      expect(response.status, response.text).toBe(422);
      expect(validationItems(response)[0]).toMatchObject({ ctx: { error: "blocked_address" } });
    }
    expect(trap.connections()).toBe(0);
  });

  it("still fetches from the allowed image fake", async () => {
    const conversationId = await newConversation(shop);
    const response = await api.sendMessage(shop.apiKey, {
      conversation_id: conversationId,
      message: "look",
      attachments: [{ type: "image", url: `${environment.imageBaseUrl}/png.png` }],
    });

    expect(response.status, response.text).toBe(200);
  });

  it("refuses look-up tools whose host spells the listener's address, before connecting", async () => {
    const hosts = [
      `[::ffff:7f00:1]:${trap.port}`,
      `[0:0:0:0:0:ffff:7f00:1]:${trap.port}`,
      `[::ffff:127.0.0.1]:${trap.port}`,
      `127.0.0.1:${trap.port}`,
      `localhost:${trap.port}`,
      `[::1]:${trap.port}`,
    ];
    for (const host of hosts) {
      const tenant = await seedTenant({ chatbot: { fallbackReply: "Sorry, I can't help with that." } });
      const tool = await seedTool(tenant, {
        kind: "http_get",
        name: "order_status",
        credentials: {},
        config: {
          purpose: "Reads one order of the shop. Use it when the visitor asks about an order's status.",
          urlTemplate: `https://${host}/orders/{order_number}`,
          variables: [
            {
              name: "order_number",
              label: "order number",
              description: "The order number.",
              kind: "order_number",
            },
          ],
          match: { order_number: "number" },
          expose: { status: "status" },
        },
      });
      const conversationId = await newConversation(tenant);

      const response = await api.sendMessage(tenant.apiKey, {
        conversation_id: conversationId,
        message: "Where is my order #1001?",
      });

      expect(response.status, response.text).toBe(200);
      expect(trap.connections(), host).toBe(0);
      const attempt = runtimeLog()
        .split("\n")
        .filter((line) => line.includes(tool.toolId) && line.includes("tool look-up"));
      expect(attempt.join("\n"), host).toContain('"reason":"blocked_host"');
    }
    expect(trap.connections()).toBe(0);
  });
});
