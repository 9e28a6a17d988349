/**
 * Look-up tools through the management API: the templates for forms, tools from a template with
 * write-only credentials (masked hints back, never the values), and the test action against the
 * platform (the local WooCommerce fake) showing what was requested without secrets and a redacted
 * outcome. Another organization's tools are not found.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { wooDemo } from "#test/fakes/platforms/woocommerce";
import { isLocal, platforms } from "#test/support/harness";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";

interface Tool {
  tool_id: string;
  name: string;
  kind: string;
  config: Record<string, unknown>;
  variables: { name: string; label: string }[];
  credentials: Record<string, string>;
  requests_per_minute: number;
}

interface Template {
  kind: string;
  platform: string;
  config: { required?: string[]; properties: Record<string, unknown> };
  credentials: { name: string; required: boolean }[];
  variables: { name: string }[];
}

let home: ManagedTenant;
let other: ManagedTenant;
const as = (tenant: ManagedTenant) => ({ as: tenant.admin.token, organization: tenant.organizationId });
/** Every answer of this file, checked for credentials at the end. */
const answers: string[] = [];
const secrets = Object.values(wooDemo.secrets);

async function addWoo(tenant: ManagedTenant, config: Record<string, unknown> = {}, name?: string) {
  const added = await manage<Tool>("POST", `/manage/chatbots/${tenant.chatbotId}/tools`, {
    ...as(tenant),
    body: {
      kind: "woocommerce",
      ...(name ? { name } : {}),
      config: { ...wooDemo.config, ...config },
      credentials: { ...wooDemo.secrets },
    },
  });
  answers.push(added.text);
  return added;
}

describe.runIf(hasIdentity)("look-up tools", () => {
  beforeAll(async () => {
    [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
  });

  it("describes the five platform templates and the generic GET, with their required values", async () => {
    const listed = await manage<{ templates: Template[] }>("GET", "/manage/tool-templates", {
      as: home.viewer.token,
      organization: home.organizationId,
    });
    expect(listed.status).toBe(200);
    const byKind = Object.fromEntries(listed.body.templates.map((template) => [template.kind, template]));
    expect(Object.keys(byKind).sort()).toEqual([
      "http_get",
      "lightspeed",
      "picqer",
      "sendcloud",
      "shopify",
      "woocommerce",
    ]);
    expect(byKind.woocommerce?.config.required).toEqual(["shopUrl"]);
    expect(byKind.woocommerce?.credentials).toEqual([
      { name: "consumerKey", required: true },
      { name: "consumerSecret", required: true },
    ]);
    expect(byKind.woocommerce?.variables.map((variable) => variable.name)).toEqual(["order_number", "email"]);
    expect(byKind.sendcloud?.variables.map((variable) => variable.name)).toEqual([
      "tracking_code",
      "postal_code",
    ]);
    expect(byKind.shopify?.credentials).toEqual([{ name: "accessToken", required: true }]);
    expect(byKind.http_get?.variables).toEqual([]);
  });

  it("adds a tool whose credentials come back only as masked hints", async () => {
    const added = await addWoo(home);
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      kind: "woocommerce",
      name: "lookup_woocommerce",
      variables: [{ name: "order_number" }, { name: "email" }],
      credentials: { consumerKey: "••••7f9a", consumerSecret: "••••7d9f" },
    });
    const read = await manage<Tool>("GET", `/manage/chatbots/${home.chatbotId}/tools/${added.body.tool_id}`, {
      as: home.viewer.token,
      organization: home.organizationId,
    });
    answers.push(read.text);
    expect(read.body.credentials).toEqual(added.body.credentials);
    const listed = await manage("GET", `/manage/chatbots/${home.chatbotId}/tools`, as(home));
    answers.push(listed.text);
    expect((listed.body as { tools: Tool[] }).tools.map((tool) => tool.tool_id)).toContain(
      added.body.tool_id,
    );
  });

  it("checks settings and credentials against the template (422), without echoing a credential", async () => {
    const missing = await manage("POST", `/manage/chatbots/${home.chatbotId}/tools`, {
      ...as(home),
      body: {
        kind: "woocommerce",
        name: "second_tool",
        config: { shopUrl: "http://plain.example" },
        credentials: { consumerKey: "ck_only-one-given-0000" },
      },
    });
    answers.push(missing.text);
    expect([missing.status, errorCode(missing)]).toEqual([422, "invalid_argument"]);
    expect(missing.text).not.toContain("ck_only-one-given-0000");
    const unknownKind = await manage("POST", `/manage/chatbots/${home.chatbotId}/tools`, {
      ...as(home),
      body: { kind: "magento", config: {} },
    });
    expect(unknownKind.status).toBe(422);
    expect(unknownKind.body).toMatchObject({ error: { details: { fields: [{ loc: ["body", "kind"] }] } } });
  });

  it("changes settings, cap and credentials; new credentials replace the old", async () => {
    const added = await addWoo(home, {}, "order_status_1");
    expect(added.status).toBe(201);
    const renamed = await manage<Tool>(
      "PATCH",
      `/manage/chatbots/${home.chatbotId}/tools/${added.body.tool_id}`,
      {
        ...as(home),
        body: {
          name: "order_status_2",
          requests_per_minute: 12,
          credentials: {
            consumerKey: "ck_0000000000000000000000000000000000001111",
            consumerSecret: "cs_2222",
          },
        },
      },
    );
    answers.push(renamed.text);
    expect(renamed.body).toMatchObject({
      name: "order_status_2",
      requests_per_minute: 12,
      credentials: { consumerKey: "••••1111", consumerSecret: "••••" },
    });
    const removed = await manage(
      "DELETE",
      `/manage/chatbots/${home.chatbotId}/tools/${added.body.tool_id}`,
      as(home),
    );
    expect(removed.status).toBe(204);
    const gone = await manage(
      "GET",
      `/manage/chatbots/${home.chatbotId}/tools/${added.body.tool_id}`,
      as(home),
    );
    expect([gone.status, errorCode(gone)]).toEqual([404, "tool_not_found"]);
  });

  describe.runIf(isLocal)("the test action (against the local platform fakes)", () => {
    it("runs one look-up and shows what was requested, without secrets, and the redacted outcome", async () => {
      // Credentials in the query (authMode query) are the hardest case for redaction.
      const tenant = await seedManagedTenant();
      const added = await addWoo(tenant, { authMode: "query" });
      const tested = await manage<{
        result: string;
        verdict: string;
        requests: {
          method: string;
          url: string;
          headers: Record<string, string>;
          outcome: string;
          status: number | null;
        }[];
        model_sees: { status: string; content: Record<string, unknown> };
        scripted_reply: string;
      }>("POST", `/manage/chatbots/${tenant.chatbotId}/tools/${added.body.tool_id}/test`, {
        ...as(tenant),
        body: { values: { order_number: "1001", email: "jan.jansen@example.nl" } },
      });
      answers.push(tested.text);
      expect(tested.status).toBe(200);
      expect(tested.body.result).toBe("found");
      expect(tested.body.requests).toHaveLength(1);
      const [sent] = tested.body.requests;
      expect(sent).toMatchObject({ method: "GET", outcome: "ok", status: 200 });
      expect(sent?.url).toContain(`${wooDemo.origin}/wp-json/wc/v3/orders?`);
      expect(sent?.url).toContain("consumer_key=[redacted]&consumer_secret=[redacted]");
      expect(tested.body.model_sees).toMatchObject({ status: "success", content: { result: "found" } });
      expect(JSON.stringify(tested.body.model_sees)).not.toContain("jan.jansen");
      expect(tested.body.scripted_reply).toContain("1001");
      const requests = await platforms.requests("woocommerce");
      expect(requests.at(-1)?.method).toBe("GET");
    });

    it("shows a refused credential as auth_failed, the Basic header redacted", async () => {
      const tenant = await seedManagedTenant();
      const added = await addWoo(tenant);
      await manage("PATCH", `/manage/chatbots/${tenant.chatbotId}/tools/${added.body.tool_id}`, {
        ...as(tenant),
        body: {
          credentials: { consumerKey: "ck_wrong_wrong_wrong_wrong", consumerSecret: "cs_wrong_wrong_wrong" },
        },
      });
      const tested = await manage<{
        result: string;
        requests: { headers: Record<string, string>; status: number | null }[];
      }>("POST", `/manage/chatbots/${tenant.chatbotId}/tools/${added.body.tool_id}/test`, {
        ...as(tenant),
        body: { values: { order_number: "1001", email: "jan.jansen@example.nl" } },
      });
      answers.push(tested.text);
      expect(tested.body.result).toBe("auth_failed");
      expect(tested.body.requests[0]?.headers.authorization).toBe("[redacted]");
      expect(tested.text).not.toContain("ck_wrong");
    });

    it("asks for every sample value the tool collects", async () => {
      const added = await addWoo(home, {}, "order_status_3");
      const tested = await manage(
        "POST",
        `/manage/chatbots/${home.chatbotId}/tools/${added.body.tool_id}/test`,
        {
          ...as(home),
          body: { values: { order_number: "1001" } },
        },
      );
      expect([tested.status, errorCode(tested)]).toEqual([422, "invalid_argument"]);
    });
  });

  it("reaches no other organization's tools", async () => {
    const theirs = await addWoo(other);
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["PATCH", "", { name: "mine" }],
      ["DELETE", "", undefined],
      ["POST", "/test", { values: { order_number: "1001", email: "jan.jansen@example.nl" } }],
    ] as const) {
      const answer = await manage(
        method,
        `/manage/chatbots/${other.chatbotId}/tools/${theirs.body.tool_id}${suffix}`,
        {
          ...as(home),
          ...(body ? { body } : {}),
        },
      );
      answers.push(answer.text);
      expect([method, suffix, answer.status, errorCode(answer)]).toEqual([
        method,
        suffix,
        404,
        "tool_not_found",
      ]);
    }
    const listed = await manage("GET", `/manage/chatbots/${other.chatbotId}/tools`, as(home));
    expect([listed.status, errorCode(listed)]).toEqual([404, "chatbot_not_found"]);
    const added = await manage("POST", `/manage/chatbots/${other.chatbotId}/tools`, {
      ...as(home),
      body: { kind: "sendcloud", credentials: { publicKey: "p", secretKey: "s" } },
    });
    expect([added.status, errorCode(added)]).toEqual([404, "chatbot_not_found"]);
    const unknown = await manage("GET", `/manage/chatbots/${home.chatbotId}/tools/${randomUUID()}`, as(home));
    expect([unknown.status, errorCode(unknown)]).toEqual([404, "tool_not_found"]);
  });

  it("never answers a stored credential, in any of the answers above", () => {
    for (const text of answers) for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
