import { describe, expect, it } from "vitest";
import {
  API_KEY_PREFIX,
  displayPrefixOf,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
} from "#functions/domain/api-keys";
import { bearerToken } from "#functions/domain/authentication";

describe("API key format", () => {
  it("generates prefixed, checksummed, unique keys", () => {
    const keys = Array.from({ length: 200 }, generateApiKey);
    for (const key of keys) {
      expect(key).toMatch(/^cbk_[0-9A-Za-z]{38}$/);
      expect(key.startsWith(API_KEY_PREFIX)).toBe(true);
      expect(isWellFormedApiKey(key)).toBe(true);
    }
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("refuses a key with any character changed (checksum), a wrong prefix or length", () => {
    const key = generateApiKey();
    for (let index = API_KEY_PREFIX.length; index < key.length; index++) {
      const original = key.charAt(index);
      const replacement = original === "a" ? "b" : "a";
      expect(isWellFormedApiKey(key.slice(0, index) + replacement + key.slice(index + 1))).toBe(false);
    }
    expect(isWellFormedApiKey(`sk_${key.slice(4)}`)).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(`${key}x`)).toBe(false);
  });

  it("stores only a SHA-256 and shows only a short prefix", () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).not.toContain(key.slice(4, 20));
    expect(displayPrefixOf(key)).toBe(`${key.slice(0, 10)}…`);
  });
});

describe("bearerToken", () => {
  it("reads the Bearer scheme case-insensitively, and nothing else", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer abc")).toBe("abc");
    expect(bearerToken("BEARER   abc  ")).toBe("abc");
    expect(bearerToken("Basic abc")).toBeUndefined();
    expect(bearerToken("Bearer")).toBeUndefined();
    expect(bearerToken("Bearer a b")).toBeUndefined();
    expect(bearerToken("abc")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
