/**
 * The operator CLI's `tools` commands against the local table: credentials given once and masked
 * everywhere after, `tools test` against a platform (in-process fakes here), and a tool added with
 * the CLI answering visitors through the API (the runtime reaches the suite's own fakes).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { keys } from "#functions/store/items";
import { runCli } from "#lib/admin/cli";
import { type PlatformFakes, startPlatformFakes } from "#test/fakes/platforms/index";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
import {
  api,
  domain,
  environment,
  isLocal,
  newConversation,
  seedTenant,
  type Tenant,
} from "#test/support/harness";

describe.runIf(isLocal)("tools commands of the operator CLI", () => {
  let work: string;
  let fakes: PlatformFakes;
  let tenant: Tenant;
  /** Everything the CLI printed in this file. */
  const printed: string[] = [];
  const secrets = Object.values(wooDemo.secrets);

  beforeAll(async () => {
    fakes = await startPlatformFakes();
    work = mkdtempSync(join(tmpdir(), "chatbot-cli-tools-"));
    // What `npm start` writes for the CLI: the table, and the look-up settings of the runtime.
    writeFileSync(
      join(work, "runtime.json"),
      JSON.stringify({
        tableName: environment.tableName,
        dynamoDbEndpoint: environment.dynamoDbEndpoint,
        environment: {
          TOOL_CREDENTIALS_KEY_FILE: environment.toolCredentialsKeyFile,
          TOOL_HTTP_ORIGIN_OVERRIDES: JSON.stringify(fakes.originOverrides),
          OUTBOUND_ALLOW_PRIVATE: Object.values(fakes.originOverrides)
            .map((target) => new URL(target).host)
            .join(","),
        },
      }),
    );
    writeFileSync(join(work, "woo.json"), JSON.stringify(wooDemo.secrets));
    writeFileSync(
      join(work, "wrong.json"),
      JSON.stringify({ consumerKey: "ck_wrong", consumerSecret: "cs_wrong" }),
    );
  });
  afterAll(async () => {
    await fakes.stop();
    rmSync(work, { recursive: true, force: true });
  });
  beforeEach(async () => {
    fakes.reset();
    tenant = await seedTenant();
  });

  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, {
      out: (text) => out.push(text),
      err: (text) => err.push(text),
      env: {},
      localDirectory: work,
    });
    printed.push(...out, ...err);
    return { code, out: out.join("\n"), err: err.join("\n") };
  }

  const where = () => ["--org", tenant.organizationId, "--chatbot", tenant.chatbotId];

  async function addWoo(): Promise<string> {
    const added = await cli(
      "tools",
      "add",
      ...where(),
      "--kind",
      "woocommerce",
      "--name",
      "order_status",
      "--config",
      JSON.stringify(wooDemo.config),
      "--credentials-file",
      join(work, "woo.json"),
      "--json",
    );
    expect(added.code).toBe(0);
    return (JSON.parse(added.out) as { toolId: string }).toolId;
  }

  it("adds a tool with its credentials once, then shows them masked; the table holds them sealed", async () => {
    // Act
    const toolId = await addWoo();
    const listed = await cli("tools", "list", ...where());
    const { Item } = await domain().db.client.send(
      new GetCommand({
        TableName: domain().db.tableName,
        Key: keys.tool(tenant.organizationId, tenant.chatbotId, toolId),
      }),
    );
    // Assess
    expect(listed.code).toBe(0);
    expect(listed.out).toContain("order_status");
    expect(listed.out).toContain(`consumerKey: ••••${wooDemo.secrets.consumerKey.slice(-4)}`);
    expect(String(Item?.credentials)).toMatch(/^local1\./);
    for (const secret of secrets) expect(JSON.stringify(Item)).not.toContain(secret);
  });

  it("tests a tool against the platform with sample values and prints what the chatbot would see", async () => {
    // Prepare
    const toolId = await addWoo();
    // Act
    const tested = await cli(
      "tools",
      "test",
      toolId,
      ...where(),
      "--value",
      "order_number=1001",
      "--value",
      "email=jan.jansen@example.nl",
    );
    // Assess
    expect(tested.code).toBe(0);
    expect(tested.out).toContain("result: found");
    expect(tested.out).toContain("status: processing");
    expect(tested.out).toContain("I found your order 1001");
    expect(fakes.woocommerce.requests).toHaveLength(1);
    expect(fakes.woocommerce.requests[0]?.method).toBe("GET");
  });

  it("replaces credentials with update, and `tools test` then reports the platform's refusal", async () => {
    // Prepare
    const toolId = await addWoo();
    // Act
    const updated = await cli(
      "tools",
      "update",
      toolId,
      ...where(),
      "--credentials-file",
      join(work, "wrong.json"),
      "--requests-per-minute",
      "5",
    );
    const tested = await cli(
      "tools",
      "test",
      toolId,
      ...where(),
      "--value",
      "order_number=1001",
      "--value",
      "email=jan.jansen@example.nl",
    );
    // Assess
    expect(updated.code).toBe(0);
    expect(updated.out).toContain("requestsPerMinute: 5");
    expect(updated.out).toContain("consumerKey: ••••");
    expect(updated.out).not.toContain("ck_wrong");
    expect(tested.out).toContain("result: auth_failed");
  });

  it("refuses incomplete credentials naming the field, never echoing a value", async () => {
    const refused = await cli(
      "tools",
      "add",
      ...where(),
      "--kind",
      "woocommerce",
      "--config",
      JSON.stringify(wooDemo.config),
      "--credential",
      `consumerKey=${wooDemo.secrets.consumerKey}`,
    );
    expect(refused.code).toBe(2); // a missing value: a usage error
    expect(refused.err).toContain("consumerSecret");
    expect(refused.err).not.toContain(wooDemo.secrets.consumerKey);
  });

  it("removes a tool", async () => {
    const toolId = await addWoo();
    expect((await cli("tools", "remove", toolId, ...where())).code).toBe(0);
    expect((await cli("tools", "list", ...where(), "--json")).out).toBe("[]");
    const again = await cli("tools", "remove", toolId, ...where());
    expect(again.code).toBe(1);
    expect(again.err).toContain("tool_not_found");
  });

  it("a tool added with the CLI answers visitors through the API", async () => {
    // Prepare
    await addWoo();
    const conversationId = await newConversation(tenant);
    // Act
    const asked = await api.sendMessage(tenant.apiKey, {
      conversation_id: conversationId,
      message: "Where is order 1002?",
    });
    const answered = await api.sendMessage(tenant.apiKey, {
      conversation_id: conversationId,
      message: "anna.devries@example.nl",
    });
    // Assess
    expect(asked.body.messages[0]?.content).toContain("e-mail address");
    expect(answered.body.messages[0]?.content).toContain("Status: completed");
    for (const secret of secrets) expect(`${asked.text}${answered.text}`).not.toContain(secret);
  });

  it("never prints a credential", () => {
    expect(printed.length).toBeGreaterThan(5);
    for (const secret of secrets) expect(printed.join("\n")).not.toContain(secret);
  });
});
