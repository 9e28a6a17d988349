/**
 * Look-up settings from the environment: the local runtime's conveniences (key file, origin
 * overrides, private addresses) must be impossible to switch on in a Lambda.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { allowListFromEnvironment } from "#functions/net/outbound-address";
import { envelopeCipherFor } from "#functions/secrets/envelope";
import { toolEnvironment } from "#functions/tools/environment";
import { createHttpGet } from "#functions/tools/http-get";

const local = {
  TOOL_CREDENTIALS_KEY_FILE: "/tmp/tool.key",
  OUTBOUND_ALLOW_PRIVATE: "127.0.0.1:4000",
  TOOL_HTTP_ORIGIN_OVERRIDES: JSON.stringify({ "https://shop.example/": "http://127.0.0.1:4000/x" }),
};

describe("tool environment", () => {
  const work = mkdtempSync(join(tmpdir(), "tool-env-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("takes the local runtime's settings where no Lambda runs", () => {
    expect(toolEnvironment(local)).toEqual({
      credentialKey: { kind: "key-file", path: "/tmp/tool.key" },
      http: {
        allowPrivate: [{ address: "127.0.0.1", port: 4000 }],
        originOverrides: { "https://shop.example": "http://127.0.0.1:4000" },
      },
    });
  });

  it("ignores them in a Lambda: no key file, no private addresses, no redirected origins", () => {
    const settings = toolEnvironment({ ...local, AWS_LAMBDA_FUNCTION_NAME: "chatbot-api-prod-SendMessage" });
    expect(settings).toEqual({ http: {} });
  });

  it("uses the stack's KMS key, in a Lambda or in the operator CLI", () => {
    const keyId = "arn:aws:kms:eu-west-1:111122223333:key/tools";
    expect(
      toolEnvironment({ TOOL_CREDENTIALS_KEY_ID: keyId, AWS_LAMBDA_FUNCTION_NAME: "fn" }).credentialKey,
    ).toEqual({
      kind: "kms",
      keyId,
    });
    expect(toolEnvironment({ ...local, TOOL_CREDENTIALS_KEY_ID: keyId }).credentialKey?.kind).toBe("kms");
  });

  it("blocks a private address with the Lambda's settings", async () => {
    const http = createHttpGet(toolEnvironment({ ...local, AWS_LAMBDA_FUNCTION_NAME: "fn" }).http);
    const result = await http({
      url: new URL("http://127.0.0.1:4000/orders"),
      signal: new AbortController().signal,
      deadline: Date.now() + 2_000,
    });
    expect(result).toEqual({ kind: "unavailable", reason: "blocked_host" });
  });

  it("reads the allow list as exact loopback endpoints, and refuses anything else", () => {
    expect(allowListFromEnvironment({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.1:4000, [::1]:5000" })).toEqual([
      { address: "127.0.0.1", port: 4000 },
      { address: "::1", port: 5000 },
    ]);
    for (const entry of ["10.0.0.1:80", "169.254.169.254:80", "[::ffff:a9fe:a9fe]:80", "192.168.1.1:443"]) {
      expect(() => allowListFromEnvironment({ OUTBOUND_ALLOW_PRIVATE: entry }), entry).toThrow(/loopback/);
    }
    for (const entry of ["localhost:4000", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:99999", "*:80"]) {
      expect(() => allowListFromEnvironment({ OUTBOUND_ALLOW_PRIVATE: entry }), entry).toThrow(
        /IP address and port/,
      );
    }
    expect(
      allowListFromEnvironment({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.1:4000", AWS_LAMBDA_FUNCTION_NAME: "fn" }),
    ).toEqual([]);
  });

  it("seals credentials with the local key file", async () => {
    const cipher = envelopeCipherFor({ kind: "key-file", path: join(work, "key") });
    const envelope = await cipher?.encrypt("cs_secret", { organizationId: "o", toolId: "t" });
    expect(envelope).toMatch(/^local1\./);
    expect(envelope).not.toContain("cs_secret");
    expect(await cipher?.decrypt(envelope ?? "", { organizationId: "o", toolId: "t" })).toBe("cs_secret");
  });
});
