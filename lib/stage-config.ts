/**
 * The stack's configuration, from CDK context (`cdk deploy -c stage=prod -c …` or cdk.json),
 * validated so a bad value fails at synth rather than at deploy.
 */
import * as z from "zod/mini";

const csv = z.pipe(
  z.optional(z.union([z.string(), z.array(z.string())])),
  z.transform((value: string | string[] | undefined) =>
    (Array.isArray(value) ? value : (value ?? "").split(",")).map((item) => item.trim()).filter(Boolean),
  ),
);

const bool = z.pipe(
  z.optional(z.union([z.boolean(), z.enum(["true", "false"])])),
  z.transform((value: boolean | "true" | "false" | undefined) =>
    value === undefined ? undefined : value === true || value === "true",
  ),
);

const positiveInt = z.pipe(
  z.optional(z.union([z.number(), z.string()])),
  z.transform((value: number | string | undefined) => (value === undefined ? undefined : Number(value))),
);

export const stageConfigSchema = z.object({
  /** Lower-case letters, digits and dashes; names the stack (`ChatbotApi-<stage>`) and its resources. */
  stage: z._default(z.string().check(z.regex(/^[a-z][a-z0-9-]{0,20}$/)), "dev"),
  /** Keep the table and the key on `cdk destroy` (default: only for stage `prod`). */
  retainData: bool,
  /** Bedrock model or inference-profile ids the chatbots may use; the message Lambda may invoke only these. */
  bedrockModelIds: csv,
  /** Optional custom domain (SPEC.md §9: a host name with a v1 marker, e.g. api-v1.example.com) and its ACM certificate. */
  domainName: z.optional(z.string().check(z.regex(/^[a-z0-9.-]+$/))),
  certificateArn: z.optional(z.string().check(z.regex(/^arn:aws[a-z-]*:acm:/))),
  /** Stage-wide gateway throttle (requests/s, burst). Off by default: its 429 has the gateway's own body. */
  throttleRateLimit: positiveInt,
  throttleBurstLimit: positiveInt,
  logRetentionDays: z._default(z.number().check(z.int(), z.positive()), 30),
});

export type StageConfig = z.output<typeof stageConfigSchema> & { retainData: boolean };

export function parseStageConfig(context: Record<string, unknown>): StageConfig {
  const result = stageConfigSchema.safeParse(context);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join(".") || "context"}: ${issue.message}`,
    );
    throw new Error(`Invalid stage configuration: ${problems.join("; ")}`);
  }
  const config = result.data;
  if ((config.domainName === undefined) !== (config.certificateArn === undefined)) {
    throw new Error("Invalid stage configuration: domainName and certificateArn go together");
  }
  return { ...config, retainData: config.retainData ?? config.stage === "prod" };
}
