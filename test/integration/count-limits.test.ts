/**
 * Every documented count or uniqueness limit holds under concurrency: 30 creations at once through
 * the management API make exactly as many as the limit leaves room for (webhook endpoints: 20 per
 * organization; tools: 10 per chatbot, names unique; knowledge entries: 500 per chatbot), the
 * others get the documented refusal, and a removal makes room for exactly one more. A scope whose
 * items predate its counter (written straight to the table, as before counters existed) is counted
 * as it is on its first counted write.
 */
import { randomUUID } from "node:crypto";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { addKnowledgeEntry } from "#functions/domain/chatbots";
import { items, type ToolRecord } from "#functions/store/items";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
import type { ApiResponse } from "#test/support/harness";
import { domain, isLocal } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";
import { receiver } from "#test/support/webhooks";

const BURST = 30;
const as = (tenant: ManagedTenant) => ({ as: tenant.admin.token, organization: tenant.organizationId });

/** The statuses of a burst, counted: `{201: 20, 409: 10}`. */
function tally(answers: ApiResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
  return counts;
}

const burst = (send: (index: number) => Promise<ApiResponse>) =>
  Promise.all(Array.from({ length: BURST }, (_, index) => send(index)));

describe.runIf(hasIdentity && isLocal)("count limits under concurrency", () => {
  let home: ManagedTenant;

  beforeAll(async () => {
    home = await seedManagedTenant();
  });

  describe("webhook endpoints: at most 20 per organization", () => {
    const hook = receiver(`limits-${randomUUID().slice(0, 8)}`);
    const create = (tenant: ManagedTenant) =>
      manage<{ endpoint_id: string }>("POST", "/manage/webhook-endpoints", {
        ...as(tenant),
        body: { url: hook.url, events: ["conversation.created"] },
      });
    const listed = async (tenant: ManagedTenant) =>
      (
        await manage<{ webhook_endpoints: { endpoint_id: string }[] }>(
          "GET",
          "/manage/webhook-endpoints",
          as(tenant),
        )
      ).body.webhook_endpoints;

    it("creates exactly 20 of 30 concurrent creations, refuses the rest with 409 limit_reached", async () => {
      const answers = await burst(() => create(home));
      expect(tally(answers)).toEqual({ 201: 20, 409: BURST - 20 });
      const refused = answers.find((answer) => answer.status === 409);
      expect(refused?.body).toMatchObject({
        error: { code: "conflict", details: { reason: "limit_reached" } },
      });
      expect(await listed(home)).toHaveLength(20);

      // Deleting one makes room for exactly one of another burst.
      const [first] = await listed(home);
      const deleted = await manage("DELETE", `/manage/webhook-endpoints/${first?.endpoint_id}`, as(home));
      expect(deleted.status).toBe(204);
      expect(tally(await burst(() => create(home)))).toEqual({ 201: 1, 409: BURST - 1 });
      expect(await listed(home)).toHaveLength(20);
    });

    it("counts endpoints made before the counter existed, then holds the limit", async () => {
      const tenant = await seedManagedTenant();
      // Five endpoints written straight to the table, with no counter: as a stage upgraded in place has them.
      const now = new Date().toISOString();
      for (let index = 0; index < 5; index++) {
        const endpointId = randomUUID();
        await domain().db.client.send(
          new PutCommand({
            TableName: domain().db.tableName,
            Item: items.webhookEndpoint({
              endpointId,
              organizationId: tenant.organizationId,
              url: hook.url,
              events: ["conversation.created"],
              enabled: true,
              secrets: [],
              createdAt: now,
              updatedAt: now,
              leases: {},
              leaseVersion: 0,
            }),
          }),
        );
      }
      expect(tally(await burst(() => create(tenant)))).toEqual({ 201: 15, 409: BURST - 15 });
      expect(await listed(tenant)).toHaveLength(20);
    });
  });

  describe("tools: at most 10 per chatbot, each name once", () => {
    const addTool = (tenant: ManagedTenant, name: string) =>
      manage<{ tool_id: string; name: string }>("POST", `/manage/chatbots/${tenant.chatbotId}/tools`, {
        ...as(tenant),
        body: {
          kind: "woocommerce",
          name,
          config: { ...wooDemo.config },
          credentials: { ...wooDemo.secrets },
        },
      });
    const toolNames = async (tenant: ManagedTenant) =>
      (
        await manage<{ tools: { name: string }[] }>(
          "GET",
          `/manage/chatbots/${tenant.chatbotId}/tools`,
          as(tenant),
        )
      ).body.tools.map((tool) => tool.name);

    it("creates exactly 10 of 30 concurrent creations with distinct names; the rest are 422", async () => {
      const tenant = await seedManagedTenant();
      const answers = await burst((index) => addTool(tenant, `lookup_${index}`));
      expect(tally(answers)).toEqual({ 201: 10, 422: BURST - 10 });
      expect(answers.filter((answer) => answer.status === 422).map(errorCode)).toEqual(
        Array.from({ length: BURST - 10 }, () => "invalid_argument"),
      );
      expect(await toolNames(tenant)).toHaveLength(10);
    });

    it("creates one tool of 30 concurrent creations with one name; the others are told the name is taken", async () => {
      const tenant = await seedManagedTenant();
      const answers = await burst(() => addTool(tenant, "order_status"));
      expect(tally(answers)).toEqual({ 201: 1, 422: BURST - 1 });
      const refusal = answers.find((answer) => answer.status === 422)?.body as { error: { message: string } };
      expect(refusal.error.message).toContain("already has a tool named order_status");
      expect(await toolNames(tenant)).toEqual(["order_status"]);
    });

    it("keeps names unique through concurrent renames, and frees a name with its tool", async () => {
      const tenant = await seedManagedTenant();
      const created = await Promise.all(["a_tool", "b_tool", "c_tool"].map((name) => addTool(tenant, name)));
      const ids = created.map((answer) => answer.body.tool_id);
      // Three tools renamed to one name at once: one wins.
      const renames = await Promise.all(
        ids.map((toolId) =>
          manage("PATCH", `/manage/chatbots/${tenant.chatbotId}/tools/${toolId}`, {
            ...as(tenant),
            body: { name: "shared_name" },
          }),
        ),
      );
      expect(tally(renames)).toEqual({ 200: 1, 422: 2 });
      const names = await toolNames(tenant);
      expect(names.filter((name) => name === "shared_name")).toHaveLength(1);
      expect(new Set(names).size).toBe(3);
      // The winner's old name is free again, and so is shared_name once its tool is removed.
      const winner = ids[renames.findIndex((answer) => answer.status === 200)];
      const freedOld = created.find((answer) => answer.body.tool_id === winner)?.body.name ?? "";
      expect((await addTool(tenant, freedOld)).status).toBe(201);
      expect(
        (await manage("DELETE", `/manage/chatbots/${tenant.chatbotId}/tools/${winner}`, as(tenant))).status,
      ).toBe(204);
      expect(tally(await burst(() => addTool(tenant, "shared_name")))).toEqual({ 201: 1, 422: BURST - 1 });
    });

    it("reserves the names of tools made before reservations existed", async () => {
      const tenant = await seedManagedTenant();
      const now = new Date().toISOString();
      const legacy: ToolRecord = {
        toolId: randomUUID(),
        organizationId: tenant.organizationId,
        chatbotId: tenant.chatbotId,
        name: "legacy_lookup",
        kind: "woocommerce",
        config: { ...wooDemo.config },
        requestsPerMinute: 60,
        createdAt: now,
        updatedAt: now,
      };
      await domain().db.client.send(
        new PutCommand({ TableName: domain().db.tableName, Item: items.tool(legacy) }),
      );
      const answers = await burst((index) =>
        addTool(tenant, index % 2 === 0 ? "legacy_lookup" : `fresh_${index}`),
      );
      // The legacy tool counts as one of ten, and its name is taken.
      expect(tally(answers)).toEqual({ 201: 9, 422: BURST - 9 });
      const names = await toolNames(tenant);
      expect(names.filter((name) => name === "legacy_lookup")).toHaveLength(1);
      expect(names).toHaveLength(10);
    });
  });

  describe("knowledge entries: at most 500 per chatbot", () => {
    it("adds exactly the room left of 30 concurrent additions; the rest are 422", async () => {
      const tenant = await seedManagedTenant();
      // 485 entries already (through the domain, counted), so 15 fit.
      for (let start = 0; start < 485; start += 25) {
        await Promise.all(
          Array.from({ length: Math.min(25, 485 - start) }, (_, index) =>
            addKnowledgeEntry(domain(), {
              organizationId: tenant.organizationId,
              chatbotId: tenant.chatbotId,
              entry: { kind: "qa", question: `Question ${start + index}?`, answer: "An answer." },
            }),
          ),
        );
      }
      const answers = await burst((index) =>
        manage("POST", `/manage/chatbots/${tenant.chatbotId}/knowledge`, {
          ...as(tenant),
          body: { kind: "snippet", text: `Snippet ${index}` },
        }),
      );
      expect(tally(answers)).toEqual({ 201: 15, 422: BURST - 15 });
      const listed = await manage<{ entries: unknown[] }>(
        "GET",
        `/manage/chatbots/${tenant.chatbotId}/knowledge`,
        as(tenant),
      );
      expect(listed.body.entries).toHaveLength(500);
    });
  });
});
