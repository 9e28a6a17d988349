/**
 * Look-up tool fields as the management API takes them, and the context tool routes work in:
 * the tool-credentials cipher (KMS on AWS, the local key file locally) from the environment.
 * Credentials are write-only: accepted here, sealed by the domain, shown back only as hints.
 */
import * as z from "zod/mini";
import type { DomainContext } from "#functions/domain/context";
import { type ToolsContext, toolLimits } from "#functions/domain/tools";
import { envelopeCipherFor } from "#functions/secrets/envelope";
import { toolEnvironment } from "#functions/tools/environment";
import { templateKinds } from "#functions/tools/template";

export const toolKind = z.enum(templateKinds).check(z.describe("The template (GET /manage/tool-templates)."));

export const toolName = z
  .string()
  .check(
    z.regex(/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/),
    z.maxLength(64),
    z.describe("The name the model calls the tool by (default `lookup_{kind}`)."),
  );

export const toolConfig = z
  .record(z.string().check(z.maxLength(64)), z.unknown())
  .check(z.describe("The template's settings (its `config` JSON Schema); checked against the template."));

export const toolCredentials = z
  .record(z.string().check(z.maxLength(64)), z.string().check(z.maxLength(512)))
  .check(
    z.describe(
      "The template's credential fields. Write-only: stored encrypted, never shown again (the tool shows masked hints).",
    ),
  );

export const toolDescription = z
  .string()
  .check(
    z.maxLength(toolLimits.description),
    z.describe("Replaces the template's description for the model (empty: back to the template's)."),
  );

export const requestsPerMinute = z
  .int()
  .check(
    z.gte(toolLimits.requestsPerMinute.min),
    z.lte(toolLimits.requestsPerMinute.max),
    z.describe("Cap on requests this tool sends to its platform (token bucket, per minute)."),
  );

/** The domain context plus the credentials cipher the stage configures; made on first use. */
export function lazyToolsContext(ctx: DomainContext): () => ToolsContext {
  let made: ToolsContext | undefined;
  return () => {
    if (!made) {
      const cipher = envelopeCipherFor(toolEnvironment(process.env).credentialKey);
      made = {
        get db() {
          return ctx.db;
        },
        clock: ctx.clock,
        ...(cipher ? { credentials: cipher } : {}),
      };
    }
    return made;
  };
}
