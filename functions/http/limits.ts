/**
 * Published size limits of the public API (also in the OpenAPI document). Chosen so that the
 * largest valid request stays below Lambda's 6 MB invoke payload: 4 inline images of at most
 * 1.4 M base64 characters each plus the text is about 5.6 MB.
 */
import {
  IMAGE_FETCH_TIMEOUT_MS,
  MAX_IMAGE_BYTES,
  MAX_IMAGES_PER_MESSAGE,
} from "#functions/agent/image-limits";

export const attachmentLimits = {
  perMessage: MAX_IMAGES_PER_MESSAGE,
  urlLength: 2_048,
  inlineBase64Length: 1_400_000,
  fetchedImageBytes: MAX_IMAGE_BYTES,
  fetchTimeoutMs: IMAGE_FETCH_TIMEOUT_MS,
} as const;

export const messageLimits = {
  textLength: 8_000,
} as const;
