/**
 * The widget's settings through the management API (CONTRACT §12): a chatbot's widget is off with
 * no origin until an admin turns it on; viewers read, admins write; origins are exact or carry one
 * leading wildcard label, at most 20; the appearance's bounds; the identity secret shown once, in
 * the rotation's answer only, the previous one dated; another organization's chatbot not found.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  errorCode,
  hasIdentity,
  type ManagedTenant,
  manage,
  seedManagedTenant,
} from "#test/support/management";

interface WidgetSettings {
  chatbot_id: string;
  enabled: boolean;
  allowed_origins: string[];
  identity_verification: string;
  appearance: Record<string, unknown>;
  daily_message_budget: number;
  identity_secret_created_at: string | null;
  previous_identity_secret_expires_at: string | null;
  updated_at: string | null;
}

let home: ManagedTenant;
let other: ManagedTenant;
const admin = (tenant: ManagedTenant) => ({ as: tenant.admin.token, organization: tenant.organizationId });
const viewer = (tenant: ManagedTenant) => ({ as: tenant.viewer.token, organization: tenant.organizationId });
const path = (tenant: ManagedTenant) => `/manage/chatbots/${tenant.chatbotId}/widget`;
const fieldLocs = (body: unknown) =>
  (body as { error: { details: { fields: { loc: string[] }[] } } }).error.details.fields.map((field) =>
    field.loc.join("."),
  );

describe.runIf(hasIdentity)("a chatbot's widget settings", () => {
  beforeAll(async () => {
    [home, other] = await Promise.all([seedManagedTenant(), seedManagedTenant()]);
  });

  it("are off with no origin until an admin sets them; a viewer reads them", async () => {
    const fresh = await manage<WidgetSettings>("GET", path(home), viewer(home));
    expect(fresh.status).toBe(200);
    expect(fresh.body).toMatchObject({
      chatbot_id: home.chatbotId,
      enabled: false,
      allowed_origins: [],
      identity_verification: "off",
      appearance: { color: expect.stringMatching(/^#[0-9a-f]{6}$/), position: "right", language: "auto" },
      identity_secret_created_at: null,
      previous_identity_secret_expires_at: null,
      updated_at: null,
    });
    expect(fresh.body.daily_message_budget).toBeGreaterThan(0);

    const changed = await manage<WidgetSettings>("PUT", path(home), {
      ...admin(home),
      body: {
        enabled: true,
        allowed_origins: ["https://Shop.Example/", "http://localhost:8080", "https://*.shop.example"],
        identity_verification: "optional",
        appearance: {
          title: "Shop help",
          color: "#0A7B34",
          position: "left",
          launcher_label: "Questions?",
          starter_questions: ["Where is my order?", "Do you ship to Belgium?"],
          language: "nl-BE",
        },
        daily_message_budget: 250,
      },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      enabled: true,
      // Stored normalised: lower case, no trailing slash.
      allowed_origins: ["https://shop.example", "http://localhost:8080", "https://*.shop.example"],
      identity_verification: "optional",
      appearance: {
        title: "Shop help",
        color: "#0a7b34",
        position: "left",
        launcher_label: "Questions?",
        starter_questions: ["Where is my order?", "Do you ship to Belgium?"],
        language: "nl-BE",
      },
      daily_message_budget: 250,
      updated_at: expect.stringMatching(/Z$/),
    });
    // A change names only what changes; the rest is kept.
    const partly = await manage<WidgetSettings>("PUT", path(home), {
      ...admin(home),
      body: { appearance: { title: "Help" } },
    });
    expect(partly.status).toBe(200);
    expect(partly.body.appearance).toMatchObject({ title: "Help", position: "left", language: "nl-BE" });
    expect(partly.body.allowed_origins).toHaveLength(3);
    expect((await manage<WidgetSettings>("GET", path(home), viewer(home))).body).toEqual(partly.body);

    const byViewer = await manage("PUT", path(home), { ...viewer(home), body: { enabled: false } });
    expect(byViewer.status).toBe(403);
    expect(errorCode(byViewer)).toBe("forbidden");
  });

  it("refuse origins that are not origins, more than 20 of them, and appearances out of bounds (422)", async () => {
    for (const origin of [
      "shop.example",
      "https://shop.example/path",
      "https://*.*.shop.example",
      "https://shop.*.example",
      "ftp://shop.example",
      "https://user@shop.example",
      "*",
    ]) {
      const refused = await manage("PUT", path(home), {
        ...admin(home),
        body: { allowed_origins: [origin] },
      });
      expect(refused.status, origin).toBe(422);
      expect(fieldLocs(refused.body), origin).toEqual(["body.allowed_origins.0"]);
    }
    const many = Array.from({ length: 21 }, (_, index) => `https://shop${index}.example`);
    const tooMany = await manage("PUT", path(home), { ...admin(home), body: { allowed_origins: many } });
    expect(tooMany.status).toBe(422);
    expect(fieldLocs(tooMany.body)).toEqual(["body.allowed_origins"]);
    expect(
      (await manage("PUT", path(home), { ...admin(home), body: { allowed_origins: many.slice(0, 20) } }))
        .status,
    ).toBe(200);

    const refused = await manage("PUT", path(home), {
      ...admin(home),
      body: {
        identity_verification: "sometimes",
        daily_message_budget: -1,
        appearance: {
          color: "green",
          position: "top",
          starter_questions: ["1", "2", "3", "4", "5"],
          language: "not a language",
        },
      },
    });
    expect(refused.status).toBe(422);
    expect(fieldLocs(refused.body)).toEqual(
      expect.arrayContaining([
        "body.identity_verification",
        "body.daily_message_budget",
        "body.appearance.color",
        "body.appearance.position",
        "body.appearance.starter_questions",
        "body.appearance.language",
      ]),
    );
    // Nothing of a refused change is kept.
    const read = await manage<WidgetSettings>("GET", path(home), viewer(home));
    expect(read.body.identity_verification).toBe("optional");
    expect(read.body.allowed_origins).toHaveLength(20);
  });

  it("show an identity secret once, in the rotation's answer, and date the previous one", async () => {
    const byViewer = await manage("POST", `${path(home)}/identity-secret`, viewer(home));
    expect(byViewer.status).toBe(403);

    const first = await manage<{ identity_secret: string }>(
      "POST",
      `${path(home)}/identity-secret`,
      admin(home),
    );
    expect(first.status).toBe(201);
    expect(first.body.identity_secret).toMatch(/^cis_[A-Za-z0-9_-]{40,}$/);
    const afterFirst = await manage<WidgetSettings>("GET", path(home), viewer(home));
    expect(afterFirst.body.identity_secret_created_at).toMatch(/Z$/);
    expect(afterFirst.body.previous_identity_secret_expires_at).toBeNull();

    const second = await manage<{ identity_secret: string }>(
      "POST",
      `${path(home)}/identity-secret`,
      admin(home),
    );
    expect(second.status).toBe(201);
    expect(second.body.identity_secret).not.toBe(first.body.identity_secret);
    const afterSecond = await manage<WidgetSettings>("GET", path(home), admin(home));
    const keptUntil = Date.parse(afterSecond.body.previous_identity_secret_expires_at ?? "");
    expect(keptUntil - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(keptUntil - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);
    // The settings never carry a secret, to any reader.
    expect(afterSecond.text).not.toContain(first.body.identity_secret);
    expect(afterSecond.text).not.toContain(second.body.identity_secret);
    expect(afterSecond.text).not.toContain("cis_");
  });

  it("are not found for another organization's chatbot", async () => {
    for (const [method, suffix] of [
      ["GET", ""],
      ["PUT", ""],
      ["POST", "/identity-secret"],
    ] as const) {
      const answer = await manage(method, `${path(home)}${suffix}`, {
        ...admin(other),
        ...(method === "PUT" ? { body: { enabled: true } } : {}),
      });
      expect(answer.status, `${method} ${suffix}`).toBe(404);
    }
  });
});
