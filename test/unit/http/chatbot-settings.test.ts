/**
 * The engine rules of a chatbot's settings (http/chatbot-settings.ts): who may choose a model
 * server, name a stage secret or paste a key; a key belongs to its server; Bedrock models come from
 * the stage's list; a stage may forbid custom servers (then an admin's change is a 403).
 */
import { describe, expect, it } from "vitest";
import { AppError } from "#functions/errors";
import type { OrganizationCaller } from "#functions/http/api-handler";
import { type EnginePolicy, engineFrom } from "#functions/http/chatbot-settings";
import type { EngineConfig } from "#functions/store/items";

const admin = {
  principal: { kind: "user", userId: "u-1" },
  organizationId: "org-1",
  role: "admin",
} as unknown as OrganizationCaller;
const operator = { ...admin, role: "operator" } as unknown as OrganizationCaller;
const open: EnginePolicy = { bedrockModels: ["anthropic.claude-a-v1"], customModelServers: true };
const closed: EnginePolicy = { ...open, customModelServers: false };
const stored: EngineConfig = {
  kind: "openai",
  baseUrl: "https://api.openai.com/v1",
  model: "gpt-4o-mini",
  apiKey: "local1.envelope",
  apiKeyHint: "••••abcd",
};

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.code : "not an AppError";
  }
};

describe("an openai engine's server and key", () => {
  it("lets an admin choose a server and paste a key when the stage allows it", () => {
    const choice = engineFrom(
      { kind: "openai", base_url: "https://models.example/v1", model: "m", api_key: "sk-123" },
      admin,
      undefined,
      open,
    );
    expect(choice).toEqual({
      engine: { kind: "openai", baseUrl: "https://models.example/v1", model: "m" },
      modelKey: "sk-123",
    });
  });

  it("leaves servers to operators when the stage forbids custom ones, but still takes an admin's model and key", () => {
    expect(
      codeOf(() =>
        engineFrom(
          { kind: "openai", base_url: "https://models.example/v1", model: "m" },
          admin,
          stored,
          closed,
        ),
      ),
    ).toBe("forbidden");
    expect(engineFrom({ kind: "openai", model: "gpt-4o", api_key: "sk-new" }, admin, stored, closed)).toEqual(
      {
        engine: { kind: "openai", baseUrl: "https://api.openai.com/v1", model: "gpt-4o" },
        modelKey: "sk-new",
      },
    );
    expect(
      engineFrom(
        { kind: "openai", base_url: "https://models.example/v1", model: "m" },
        operator,
        stored,
        closed,
      ).engine,
    ).toEqual({ kind: "openai", baseUrl: "https://models.example/v1", model: "m" });
  });

  it("keeps a stored key while the server stays, and drops it with the server or on null", () => {
    expect(engineFrom({ kind: "openai", model: "gpt-4o" }, admin, stored, open).engine).toEqual({
      ...stored,
      model: "gpt-4o",
    });
    expect(
      engineFrom({ kind: "openai", base_url: "https://models.example/v1", model: "m" }, admin, stored, open)
        .engine,
    ).toEqual({ kind: "openai", baseUrl: "https://models.example/v1", model: "m" });
    expect(engineFrom({ kind: "openai", model: "m", api_key: null }, admin, stored, open).engine).toEqual({
      kind: "openai",
      baseUrl: "https://api.openai.com/v1",
      model: "m",
    });
  });

  it("lets only operators name a secret of the stage, and never a key and a secret at once", () => {
    expect(
      codeOf(() => engineFrom({ kind: "openai", model: "m", api_key_secret: "acme" }, admin, stored, open)),
    ).toBe("forbidden");
    expect(
      engineFrom({ kind: "openai", model: "m", api_key_secret: "acme" }, operator, stored, open).engine,
    ).toEqual({
      kind: "openai",
      baseUrl: "https://api.openai.com/v1",
      model: "m",
      apiKeySecret: "acme",
    });
    expect(
      codeOf(() =>
        engineFrom(
          { kind: "openai", model: "m", api_key: "k", api_key_secret: "acme" },
          operator,
          stored,
          open,
        ),
      ),
    ).toBe("invalid_argument");
  });

  it("refuses a server at an address that is not public, whoever sets it", () => {
    for (const baseUrl of [
      "http://169.254.169.254/latest",
      "http://10.0.0.7/v1",
      "http://[::1]:8080/v1",
      "http://127.0.0.1/v1",
    ]) {
      expect([
        baseUrl,
        codeOf(() =>
          engineFrom({ kind: "openai", base_url: baseUrl, model: "m" }, operator, undefined, open),
        ),
      ]).toEqual([baseUrl, "invalid_argument"]);
    }
  });
});

describe("a bedrock engine's model", () => {
  it("is one of the stage's models; a saved one stays even after the list changed", () => {
    expect(
      engineFrom({ kind: "bedrock", model_id: "anthropic.claude-a-v1" }, admin, undefined, open).engine,
    ).toEqual({
      kind: "bedrock",
      modelId: "anthropic.claude-a-v1",
    });
    expect(
      codeOf(() =>
        engineFrom({ kind: "bedrock", model_id: "anthropic.claude-b-v1" }, admin, undefined, open),
      ),
    ).toBe("invalid_argument");
    expect(
      engineFrom(
        { kind: "bedrock", model_id: "anthropic.claude-old-v1" },
        admin,
        { kind: "bedrock", modelId: "anthropic.claude-old-v1" },
        open,
      ).engine,
    ).toEqual({ kind: "bedrock", modelId: "anthropic.claude-old-v1" });
  });
});
