/**
 * The limits on a message's images, apart from the code that fetches and decodes them, so that the
 * request schema can publish them without loading that code (a turn without images never does).
 */

/** At most this many attachments per message (CONTRACT.md §4). */
export const MAX_IMAGES_PER_MESSAGE = 4;
/** Per image, decoded: Bedrock's cap of 3.75 MB, read as decimal megabytes to stay under either reading. */
export const MAX_IMAGE_BYTES = 3_750_000;
/** Per URL, for the whole fetch: DNS, connection, redirects and body. */
export const IMAGE_FETCH_TIMEOUT_MS = 5_000;
