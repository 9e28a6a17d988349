/**
 * A passage: one retrievable piece of a knowledge source, what ingestion produces and retrieval
 * indexes, searches and cites. The boundary between the two halves of the knowledge pipeline:
 * ingestion (knowledge/ingest*, extraction, chunking, crawling) makes passages; the index store
 * (knowledge/index-store.ts) keeps them, and retrieval reads them from there.
 */
import { createHash } from "node:crypto";
import type { SourceType } from "#functions/store/items";

export interface Passage {
  /**
   * Stable for the same text at the same place of the same source (see `passageIdOf`), so a
   * re-sync that changes nothing keeps every id, and whatever was computed for a passage
   * (an embedding) can be kept by id.
   */
  passageId: string;
  sourceId: string;
  text: string;
  /** The headings above the passage, outermost first (a document's title first when it has one). */
  titlePath: string[];
  /** The page the passage was read from (url sources). */
  url?: string;
  /** The 1-based page of a PDF it was read from. */
  page?: number;
}

/** What a citation of a passage shows of its source, kept beside the source's passages. */
export interface PassageSource {
  sourceId: string;
  type: SourceType;
  title: string;
  /** A url source's URL (a page, a sitemap or a site's start page); absent for the others. */
  url?: string;
}

/**
 * The id of a passage: a hash of its source, place (page URL or PDF page, title path) and text,
 * with `occurrence` telling apart identical texts at the same place (0 for the first).
 */
export function passageIdOf(passage: Omit<Passage, "passageId">, occurrence = 0): string {
  const hash = createHash("sha256")
    .update(
      JSON.stringify([
        passage.sourceId,
        passage.url ?? "",
        passage.page ?? 0,
        passage.titlePath,
        passage.text,
        occurrence,
      ]),
    )
    .digest("base64url");
  return hash.slice(0, 22);
}

/** Ids for a source's passages in order, identical ones told apart by their occurrence. */
export function withPassageIds(passages: readonly Omit<Passage, "passageId">[]): Passage[] {
  const seen = new Map<string, number>();
  return passages.map((passage) => {
    const base = passageIdOf(passage);
    const occurrence = seen.get(base) ?? 0;
    seen.set(base, occurrence + 1);
    return { passageId: occurrence === 0 ? base : passageIdOf(passage, occurrence), ...passage };
  });
}
