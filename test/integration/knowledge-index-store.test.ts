/**
 * The index store's first version (functions/knowledge/index-store.ts): a source's passages as one
 * object in the knowledge bucket, and the chatbot's knowledge version bumped on every change,
 * against the runtime's local S3 and table (or a stage's bucket and table).
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { deleteChatbot, getChatbot, updateChatbot } from "#functions/domain/chatbots";
import {
  publishSourcePassages,
  readSourcePassages,
  removeSourcePassages,
} from "#functions/knowledge/index-store";
import { type PassageSource, withPassageIds } from "#functions/knowledge/passage";
import { knowledgeDomain, seedTenant, type Tenant } from "#test/support/harness";

let shop: Tenant;
let otherShop: Tenant;

beforeAll(async () => {
  [shop, otherShop] = await Promise.all([seedTenant(), seedTenant()]);
});

const sourceOf = (title: string): PassageSource => ({ sourceId: randomUUID(), type: "text", title });

const passagesOf = (source: PassageSource, texts: string[]) =>
  withPassageIds(texts.map((text) => ({ sourceId: source.sourceId, text, titlePath: [source.title] })));

describe("the index store", () => {
  it("publishes a source's passages whole, bumping the chatbot's knowledge version each time", async () => {
    const ctx = knowledgeDomain();
    const source = sourceOf("Returns");
    const before = (await getChatbot(ctx, shop.organizationId, shop.chatbotId)).knowledgeVersion ?? 0;

    const first = passagesOf(source, ["Returns are free within 30 days.", "Refunds take 5 days."]);
    const v1 = await publishSourcePassages(ctx, shop.organizationId, shop.chatbotId, source, first);
    expect(v1).toBe(before + 1);
    const published = await readSourcePassages(ctx, shop.organizationId, shop.chatbotId, source.sourceId);
    expect(published?.source).toEqual(source);
    expect(published?.passages).toEqual(first);

    const second = passagesOf(source, ["Returns are free within 60 days."]);
    const v2 = await publishSourcePassages(ctx, shop.organizationId, shop.chatbotId, source, second);
    expect(v2).toBe(v1 + 1);
    expect(
      (await readSourcePassages(ctx, shop.organizationId, shop.chatbotId, source.sourceId))?.passages,
    ).toEqual(second);
    expect((await getChatbot(ctx, shop.organizationId, shop.chatbotId)).knowledgeVersion).toBe(v2);

    const v3 = await removeSourcePassages(ctx, shop.organizationId, shop.chatbotId, source.sourceId);
    expect(v3).toBe(v2 + 1);
    expect(
      await readSourcePassages(ctx, shop.organizationId, shop.chatbotId, source.sourceId),
    ).toBeUndefined();
  });

  it("keeps each organization's passages apart", async () => {
    const ctx = knowledgeDomain();
    const source = sourceOf("Opening hours");
    await publishSourcePassages(
      ctx,
      shop.organizationId,
      shop.chatbotId,
      source,
      passagesOf(source, ["9 to 5."]),
    );
    expect(
      await readSourcePassages(ctx, otherShop.organizationId, otherShop.chatbotId, source.sourceId),
    ).toBeUndefined();
    expect(
      await readSourcePassages(ctx, otherShop.organizationId, shop.chatbotId, source.sourceId),
    ).toBeUndefined();
    // Publishing for a chatbot of another organization: no such chatbot there.
    await expect(
      publishSourcePassages(ctx, otherShop.organizationId, shop.chatbotId, source, passagesOf(source, ["x"])),
    ).rejects.toMatchObject({ code: "chatbot_not_found" });
    expect(
      await readSourcePassages(ctx, otherShop.organizationId, shop.chatbotId, source.sourceId),
    ).toBeUndefined();
  });

  it("refuses passages of another source", async () => {
    const ctx = knowledgeDomain();
    const source = sourceOf("Shipping");
    const stray = passagesOf(sourceOf("Other"), ["Elsewhere."]);
    await expect(
      publishSourcePassages(ctx, shop.organizationId, shop.chatbotId, source, stray),
    ).rejects.toThrow(/belongs to source/);
  });

  it("leaves nothing behind for a chatbot deleted meanwhile", async () => {
    const ctx = knowledgeDomain();
    const gone = await seedTenant();
    await deleteChatbot(ctx, gone.organizationId, gone.chatbotId);
    const source = sourceOf("Late");
    await expect(
      publishSourcePassages(
        ctx,
        gone.organizationId,
        gone.chatbotId,
        source,
        passagesOf(source, ["Too late."]),
      ),
    ).rejects.toMatchObject({ code: "chatbot_not_found" });
    expect(
      await readSourcePassages(ctx, gone.organizationId, gone.chatbotId, source.sourceId),
    ).toBeUndefined();
    expect(
      await removeSourcePassages(ctx, gone.organizationId, gone.chatbotId, source.sourceId),
    ).toBeUndefined();
  });

  it("a settings change never loses a knowledge version published meanwhile", async () => {
    const ctx = knowledgeDomain();
    const tenant = await seedTenant();
    const source = sourceOf("Busy");
    const rounds = 6;
    await Promise.all(
      Array.from({ length: rounds }, (_, round) =>
        Promise.all([
          publishSourcePassages(
            ctx,
            tenant.organizationId,
            tenant.chatbotId,
            source,
            passagesOf(source, [`v${round}`]),
          ),
          updateChatbot(ctx, tenant.organizationId, tenant.chatbotId, {
            instructions: `round ${round}`,
          }).catch((error: unknown) => {
            // Two settings writes racing each other may conflict; a knowledge bump never makes one.
            if (!(error instanceof Error && "code" in error && error.code === "conflict")) throw error;
          }),
        ]),
      ),
    );
    expect((await getChatbot(ctx, tenant.organizationId, tenant.chatbotId)).knowledgeVersion).toBe(rounds);
  });
});
