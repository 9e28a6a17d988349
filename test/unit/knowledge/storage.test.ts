import { describe, expect, it } from "vitest";
import { passageIdOf, withPassageIds } from "#functions/knowledge/passage";
import { knowledgeKeys, parseUploadKey } from "#functions/knowledge/storage";
import { knowledgeBucket } from "#lib/knowledge-pipeline";

describe("the knowledge bucket's keys", () => {
  it("puts uploads, and only uploads, under the prefix the bucket's notification watches", () => {
    const { prefix } = knowledgeBucket.notification;
    expect(knowledgeKeys.upload("org-1", "bot-1", "src-1", "up-1").startsWith(prefix)).toBe(true);
    expect(knowledgeKeys.passages("org-1", "bot-1", "src-1").startsWith(prefix)).toBe(false);
    expect(knowledgeKeys.crawl("org-1", "bot-1", "src-1").startsWith(prefix)).toBe(false);
  });

  it("reads an upload key back into its ids, and nothing else", () => {
    expect(parseUploadKey(knowledgeKeys.upload("org-1", "bot-1", "src-1", "up-1"))).toEqual({
      organizationId: "org-1",
      chatbotId: "bot-1",
      sourceId: "src-1",
      uploadId: "up-1",
    });
    expect(parseUploadKey("uploads/org-1/bot-1/src-1")).toBeUndefined();
    expect(parseUploadKey("uploads/org-1/bot-1/src-1/up-1/extra")).toBeUndefined();
    expect(parseUploadKey(knowledgeKeys.passages("org-1", "bot-1", "src-1"))).toBeUndefined();
  });

  it("covers everything of one chatbot with its prefixes, and nothing of another", () => {
    const prefixes = knowledgeKeys.chatbotPrefixes("org-1", "bot-1");
    const mine = [
      knowledgeKeys.upload("org-1", "bot-1", "s", "u"),
      knowledgeKeys.passages("org-1", "bot-1", "s"),
      knowledgeKeys.crawl("org-1", "bot-1", "s"),
    ];
    const theirs = [
      knowledgeKeys.passages("org-1", "bot-10", "s"),
      knowledgeKeys.passages("org-2", "bot-1", "s"),
    ];
    expect(mine.every((key) => prefixes.some((prefix) => key.startsWith(prefix)))).toBe(true);
    expect(theirs.some((key) => prefixes.some((prefix) => key.startsWith(prefix)))).toBe(false);
  });
});

describe("passage ids", () => {
  const base = { sourceId: "src-1", text: "Returns are free.", titlePath: ["Returns"] };

  it("stay the same for the same text at the same place, and change with either", () => {
    expect(passageIdOf(base)).toBe(passageIdOf({ ...base }));
    expect(passageIdOf({ ...base, text: "Returns cost 5 euros." })).not.toBe(passageIdOf(base));
    expect(passageIdOf({ ...base, titlePath: ["Shipping"] })).not.toBe(passageIdOf(base));
    expect(passageIdOf({ ...base, url: "https://shop.example/a" })).not.toBe(passageIdOf(base));
    expect(passageIdOf({ ...base, page: 2 })).not.toBe(passageIdOf(base));
    expect(passageIdOf({ ...base, sourceId: "src-2" })).not.toBe(passageIdOf(base));
  });

  it("tell identical passages of one source apart", () => {
    const ids = withPassageIds([base, base, { ...base, text: "Other." }]).map((passage) => passage.passageId);
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe(passageIdOf(base));
  });
});
