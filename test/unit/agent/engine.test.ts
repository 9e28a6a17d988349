import { describe, expect, it } from "vitest";
import { emptyToolBox } from "#functions/agent/engine";

describe("emptyToolBox", () => {
  it("offers no tools and refuses calls", async () => {
    expect(emptyToolBox.specs).toHaveLength(0);
    const outcome = await emptyToolBox.call("lookup", {}, new AbortController().signal);
    expect(outcome.status).toBe("error");
  });
});
