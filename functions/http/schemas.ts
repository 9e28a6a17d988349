/**
 * Schema pieces shared by the routes' request and response schemas. Every string has an upper
 * bound (an unbounded field is a way to make us store or process anything), and the bounds land in the OpenAPI document through these schemas.
 */
import * as z from "zod/mini";
import { canonicalUuid, describeUuidProblem, pydanticIssue } from "#functions/http/validation";

/**
 * A UUID of any version in every form Pydantic accepts (hyphenated, 32 hex digits, braces,
 * `urn:uuid:`, any case), turned into its canonical lower-case hyphenated form: the only form the
 * domain, the table and the answers ever see.
 */
export const uuid = (description: string) =>
  z.pipe(
    z.string().check(
      z.superRefine((value, ctx) => {
        if (canonicalUuid(value) !== undefined) return;
        const problem = describeUuidProblem(value);
        ctx.issues.push({
          code: "custom",
          input: value,
          message: problem,
          params: pydanticIssue("uuid_parsing", `Input should be a valid UUID, ${problem}`, {
            error: problem,
          }),
        });
      }),
      z.meta({ format: "uuid" }),
      z.describe(description),
    ),
    z.transform((value: string) => canonicalUuid(value) ?? value),
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
