import { describe, expect, it } from "vitest";
import { configureTool, lookupTemplates } from "#functions/tools/registry";
import { templateKinds } from "#functions/tools/template";
import { toToolSpec } from "#functions/tools/tool-spec";
import { demoTool } from "#test/unit/tools/support/harness";

describe("toToolSpec", () => {
  it("describes when to use the tool and what to collect, with one required string per variable", () => {
    // Act
    const spec = toToolSpec(demoTool("woocommerce"));
    // Assess
    expect(spec.name).toBe("lookup_woocommerce");
    expect(spec.description).toMatch(/order number and e-mail address/);
    expect(spec.description).toMatch(/Before calling/);
    expect(spec.inputSchema).toEqual({
      type: "object",
      properties: {
        order_number: expect.objectContaining({ type: "string", pattern: expect.any(String) }),
        email: expect.objectContaining({ type: "string", format: "email" }),
      },
      required: ["order_number", "email"],
      additionalProperties: false,
    });
  });

  it.each([
    ["shopify", ["order_number", "email"]],
    ["lightspeed", ["order_number"]],
    ["sendcloud", ["tracking_code", "postal_code"]],
    ["picqer", ["order_reference", "email"]],
  ] as const)("%s collects %j", (platform, names) => {
    const spec = toToolSpec(demoTool(platform));
    expect(spec.inputSchema.required).toEqual(names);
    expect(spec.name).toMatch(/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/);
  });

  it("uses the administrator's own description when given", () => {
    const result = configureTool({
      id: "t",
      name: "order_status",
      kind: "sendcloud",
      config: {},
      description: "Use for parcels of Acme.",
    });
    expect(result.ok && toToolSpec(result.tool).description).toBe("Use for parcels of Acme.");
  });
});

describe("configureTool", () => {
  it("has a template for every kind", () => {
    expect(Object.keys(lookupTemplates).sort()).toEqual([...templateKinds].sort());
  });

  it.each([
    ["a bad tool name", { id: "t", name: "look up!", kind: "sendcloud", config: {} }],
    [
      "an http shop URL",
      { id: "t", name: "t", kind: "woocommerce", config: { shopUrl: "http://shop.example" } },
    ],
    [
      "credentials in the shop URL",
      { id: "t", name: "t", kind: "woocommerce", config: { shopUrl: "https://ck:cs@shop.example" } },
    ],
    [
      "another Shopify API version",
      { id: "t", name: "t", kind: "shopify", config: { shop: "acme", apiVersion: "2025-01" } },
    ],
    [
      "a shop that is not a subdomain",
      { id: "t", name: "t", kind: "shopify", config: { shop: "evil.com/x" } },
    ],
    [
      "a Lightspeed language that is not two letters",
      {
        id: "t",
        name: "t",
        kind: "lightspeed",
        config: { clusterUrl: "https://api.webshopapp.com", language: "../x" },
      },
    ],
    ["a Picqer subdomain with a dot", { id: "t", name: "t", kind: "picqer", config: { subdomain: "a.b" } }],
    [
      "a Picqer contact that would break the User-Agent header",
      {
        id: "t",
        name: "t",
        kind: "picqer",
        config: { subdomain: "shop", contact: "ops@shop.example)\r\nX: y" },
      },
    ],
  ] as const)("rejects %s", (_title, stored) => {
    expect(configureTool(stored).ok).toBe(false);
  });

  it("fills the documented defaults", () => {
    const shopify = configureTool({ id: "t", name: "t", kind: "shopify", config: { shop: "acme" } });
    const lightspeed = configureTool({
      id: "t",
      name: "t",
      kind: "lightspeed",
      config: { clusterUrl: "https://api.shoplightspeed.com" },
    });
    expect(shopify.ok && shopify.tool.description).toContain("acme");
    expect(lightspeed.ok && lightspeed.tool.variables.map((v) => v.name)).toEqual(["order_number"]);
  });
});
