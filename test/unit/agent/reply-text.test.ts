import { describe, expect, it } from "vitest";
import { ReplyText } from "#functions/agent/reply-text";

/** Feeds blocks of pieces and returns the final text and what was emitted on the way. */
function feed(blocks: string[][]): { value: string; emitted: string[] } {
  const emitted: string[] = [];
  const text = new ReplyText((delta) => emitted.push(delta));
  for (const pieces of blocks) {
    text.block();
    for (const piece of pieces) text.append(piece);
  }
  return { value: text.value, emitted };
}

describe("ReplyText", () => {
  it("is the blocks trimmed and joined by a blank line, as a reply read at once", () => {
    const blocks = [["\n  Let me", " check", " that.  \n"], ["   "], ["\n\nYour order", " shipped", "\n"]];
    const { value, emitted } = feed(blocks);
    expect(value).toBe(
      blocks
        .map((pieces) => pieces.join("").trim())
        .filter(Boolean)
        .join("\n\n"),
    );
    // What left on the way is exactly the final text: nothing to take back.
    expect(emitted.join("")).toBe(value);
  });

  it("holds back trailing whitespace until more text comes, and emits nothing for whitespace alone", () => {
    const { emitted } = feed([["Hello", " ", "\n", "world", "  "]]);
    expect(emitted).toEqual(["Hello", " \nworld"]);
  });

  it("keeps inner whitespace and unicode as given", () => {
    const { value, emitted } = feed([["Größe:", "\u00a0", "42\t", "€"]]);
    expect(value).toBe("Größe:\u00a042\t€");
    expect(emitted.join("")).toBe(value);
  });

  it("is empty when no block has text", () => {
    expect(feed([[" ", "\n"], []]).value).toBe("");
  });
});
