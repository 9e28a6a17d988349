/**
 * Schema pieces shared by the routes' request and response schemas. Every string has an upper
 * bound (CONTRACT.md §3), and the bounds land in the OpenAPI document through these schemas.
 */
import * as z from "zod/mini";

/** A UUID in any version and case (as Pydantic accepts), normalised to lower case. */
export const uuid = (description: string) =>
  z.pipe(
    z.guid().check(z.describe(description)),
    z.transform((value: string) => value.toLowerCase()),
  );

/** An optional string field; `null` counts as absent (clients often send it for "no value"). */
export const optionalText = (maxLength: number, description: string) =>
  z.optional(z.nullable(z.string().check(z.maxLength(maxLength), z.describe(description))));

export const isoTimestamp = (description: string) =>
  z.string().check(z.describe(`${description} (ISO 8601, UTC)`));

/** Turns `null` from an optional field into `undefined`, the domain's "not given". */
export function given<T>(value: T | null | undefined): T | undefined {
  return value ?? undefined;
}
