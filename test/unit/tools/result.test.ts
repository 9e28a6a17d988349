import { describe, expect, it } from "vitest";
import { type LookupResult, type OrderSummary, toToolOutcome } from "#functions/tools/result";

const record: OrderSummary = {
  type: "order",
  reference: "1001",
  status: "processing",
  total: { amount: "54.85", currency: "EUR" },
  items: [{ name: "Linen shirt", quantity: 2 }],
};

describe("toToolOutcome", () => {
  it("shows a found record as a success with the summary only", () => {
    const outcome = toToolOutcome({ kind: "found", record });
    expect(outcome.status).toBe("success");
    expect(Object.keys(outcome.content).sort()).toEqual(["instructions", "record", "result"]);
    expect(outcome.content.record).toEqual(record);
  });

  it("gives not_found content that says nothing about whether the record exists", () => {
    const outcome = toToolOutcome({ kind: "not_found" });
    expect(outcome).toEqual({
      status: "success",
      content: {
        result: "not_found",
        instructions: expect.stringContaining("Do not say or suggest whether"),
      },
    });
  });

  it("lists what to ask for when input is missing or invalid", () => {
    const outcome = toToolOutcome({
      kind: "needs_input",
      missing: [{ name: "email", label: "e-mail address", reason: "absent" }],
      invalid: [{ name: "order_number", label: "order number" }],
    });
    expect(outcome.status).toBe("error");
    expect(outcome.content.instructions).toMatch(
      /No look-up was made\. Ask the visitor for their order number and e-mail address\./,
    );
  });

  it("rounds Retry-After up for the model", () => {
    expect(toToolOutcome({ kind: "rate_limited", retryAfterSeconds: 1.2 }).content).toMatchObject({
      result: "rate_limited",
      retryAfterSeconds: 2,
    });
  });

  it("does not tell the model why a platform is unavailable (auth vs outage look alike)", () => {
    const failures: LookupResult[] = [
      { kind: "auth_failed" },
      { kind: "unavailable", reason: "misconfigured" },
      { kind: "unavailable", reason: "server_error" },
      { kind: "unavailable", reason: "blocked_host" },
    ];
    const contents = failures.map((f) => toToolOutcome(f));
    for (const outcome of contents) expect(outcome).toEqual(contents[0]);
    expect(toToolOutcome({ kind: "timeout" }).status).toBe("error");
  });
});
