/**
 * Turns a message's image attachments (CONTRACT.md §4) into bytes an engine can send.
 *
 * Inline data is decoded strictly and must be what it claims to be. A URL is fetched over https
 * only, through the outbound client (net/outbound-http.ts): every connection, the first and each
 * redirect's, goes only to addresses the outbound-address guard accepts, judged on the address
 * connected to; size and time are capped while streaming. The type always comes from the bytes,
 * never from a header or a file name.
 */
import type { ImageInput, ImageMediaType } from "#functions/agent/engine";
import {
  IMAGE_FETCH_TIMEOUT_MS,
  MAX_IMAGE_BYTES,
  MAX_IMAGES_PER_MESSAGE,
} from "#functions/agent/image-limits";
import { type AllowedEndpoint, BlockedAddressError, type ResolveHost } from "#functions/net/outbound-address";
import { createOutboundClient, ResponseTooLargeError } from "#functions/net/outbound-http";

export { IMAGE_FETCH_TIMEOUT_MS, MAX_IMAGE_BYTES, MAX_IMAGES_PER_MESSAGE };
/** Redirects followed per URL, each checked like the first address. */
export const MAX_IMAGE_REDIRECTS = 2;
export const IMAGE_MEDIA_TYPES: readonly ImageMediaType[] = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
];

export type ImageAttachment =
  | { type: "image"; url: string }
  | { type: "image"; data: string; media_type: ImageMediaType };

export type AttachmentFailure =
  | "too_many"
  | "invalid_base64"
  | "too_large"
  | "unsupported_type"
  | "type_mismatch"
  | "invalid_url"
  | "blocked_address"
  | "too_many_redirects"
  | "fetch_failed"
  | "timeout";

/** One attachment could not be used; `index` is its position in the message's attachments. */
export class AttachmentError extends Error {
  override readonly name = "AttachmentError";
  readonly index: number;
  readonly failure: AttachmentFailure;

  constructor(index: number, failure: AttachmentFailure, reason: string, options?: { cause?: unknown }) {
    super(`Attachment ${index}: ${reason}`, options);
    this.index = index;
    this.failure = failure;
  }
}

export interface ImageFetchOptions {
  /**
   * Local runtime and tests only: loopback endpoints (address and port) that may be reached.
   * Production passes nothing: every address must be public.
   */
  allowPrivate?: readonly AllowedEndpoint[];
  /** Local runtime and tests only: a PEM CA that replaces the default roots, for a self-signed server. */
  trustedCa?: string;
  /** Resolves a host name to all its addresses (tests inject one; default: the system resolver). */
  resolve?: ResolveHost;
  timeoutMs?: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

/** Resolves all attachments in parallel; the first failure aborts the other fetches. */
export async function resolveImageAttachments(
  attachments: readonly ImageAttachment[],
  options: ImageFetchOptions = {},
): Promise<ImageInput[]> {
  if (attachments.length > MAX_IMAGES_PER_MESSAGE) {
    throw new AttachmentError(
      MAX_IMAGES_PER_MESSAGE,
      "too_many",
      `at most ${MAX_IMAGES_PER_MESSAGE} images per message`,
    );
  }
  const failed = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, failed.signal]) : failed.signal;
  return Promise.all(
    attachments.map(async (attachment, index) => {
      try {
        return "data" in attachment
          ? decodeImageData(attachment.data, attachment.media_type, options.maxBytes)
          : await fetchImage(attachment.url, { ...options, signal });
      } catch (error) {
        failed.abort();
        if (error instanceof Refusal) throw new AttachmentError(index, error.failure, error.message);
        throw new AttachmentError(index, "fetch_failed", "the image could not be read", { cause: error });
      }
    }),
  );
}

/** Why one image was refused, before we know its index. */
class Refusal extends Error {
  readonly failure: AttachmentFailure;
  constructor(failure: AttachmentFailure, reason: string) {
    super(reason);
    this.failure = failure;
  }
}

// A plain character class (no repeated group), so a multi-megabyte string cannot exhaust the regex engine.
const base64Alphabet = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard base64 with padding, nothing else (no whitespace, no data: prefix, no URL-safe alphabet). */
function decodeImageData(data: string, declared: ImageMediaType, maxBytes = MAX_IMAGE_BYTES): ImageInput {
  if (!data || data.length % 4 !== 0 || !base64Alphabet.test(data))
    throw new Refusal("invalid_base64", "data is not valid base64");
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  if ((data.length / 4) * 3 - padding > maxBytes)
    throw new Refusal("too_large", `larger than ${maxBytes} bytes`);
  const bytes = toUint8Array(Buffer.from(data, "base64"));
  const sniffed = sniffImageType(bytes);
  if (!sniffed) throw new Refusal("unsupported_type", "not a PNG, JPEG, GIF or WebP image");
  if (sniffed !== declared)
    throw new Refusal("type_mismatch", `media_type is ${declared} but the data is ${sniffed}`);
  return { mediaType: sniffed, bytes };
}

/** The image type from its magic bytes, or undefined when it is none of the four we accept. */
export function sniffImageType(bytes: Uint8Array): ImageMediaType | undefined {
  const startsWith = (signature: readonly number[], offset = 0) =>
    bytes.length >= offset + signature.length && signature.every((byte, i) => bytes[offset + i] === byte);
  const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));
  if (startsWith([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(ascii("GIF87a")) || startsWith(ascii("GIF89a"))) return "image/gif";
  if (startsWith(ascii("RIFF")) && startsWith(ascii("WEBP"), 8)) return "image/webp";
  return undefined;
}

/** Fetches one image URL under the guards described at the top of this file. */
async function fetchImage(url: string, options: ImageFetchOptions = {}): Promise<ImageInput> {
  const timeoutMs = options.timeoutMs ?? IMAGE_FETCH_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_IMAGE_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const send = createOutboundClient({
    ...(options.allowPrivate ? { allowPrivate: options.allowPrivate } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
    ...(options.trustedCa ? { trustedCa: options.trustedCa } : {}),
  });
  let current = parseHttpsUrl(url);
  try {
    for (let redirects = 0; ; redirects++) {
      const response = await send({
        url: current,
        headers: { accept: IMAGE_MEDIA_TYPES.join(", ") },
        signal,
      });
      const location = response.headers.get("location");
      if ([301, 302, 303, 307, 308].includes(response.status) && location) {
        response.discard();
        if (redirects >= MAX_IMAGE_REDIRECTS) {
          throw new Refusal("too_many_redirects", `more than ${MAX_IMAGE_REDIRECTS} redirects`);
        }
        current = parseHttpsUrl(location, current);
        continue;
      }
      if (response.status !== 200) {
        response.discard();
        throw new Refusal("fetch_failed", `the server answered ${response.status}`);
      }
      const bytes = await response.read(maxBytes);
      const mediaType = sniffImageType(bytes);
      if (!mediaType) throw new Refusal("unsupported_type", "not a PNG, JPEG, GIF or WebP image");
      return { mediaType, bytes };
    }
  } catch (error) {
    if (error instanceof Refusal) throw error;
    if (error instanceof BlockedAddressError) {
      throw new Refusal("blocked_address", "the host is not a public address");
    }
    if (error instanceof ResponseTooLargeError)
      throw new Refusal("too_large", `larger than ${maxBytes} bytes`);
    if (timeout.aborted) throw new Refusal("timeout", `not fetched within ${timeoutMs} ms`);
    if ((error as NodeJS.ErrnoException).code === "ENOTFOUND") {
      throw new Refusal("fetch_failed", "the host name does not resolve");
    }
    throw error;
  }
}

function parseHttpsUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new Refusal("invalid_url", "not a valid URL");
  }
  if (url.protocol !== "https:") throw new Refusal("invalid_url", "only https URLs are fetched");
  if (url.username || url.password) throw new Refusal("invalid_url", "URLs with credentials are not fetched");
  return url;
}

function toUint8Array(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
