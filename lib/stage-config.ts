/**
 * The stack's configuration, from CDK context (`cdk deploy -c stage=prod -c …` or cdk.json),
 * validated so a bad value fails at synth rather than at deploy.
 *
 * `-c name=value` always arrives as a string, while cdk.json gives JSON values: every number and
 * boolean setting accepts both forms, and anything else is refused with the setting's name.
 */
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import * as z from "zod/mini";
import { bedrockModelProblem } from "./bedrock-access.ts";

type Read<T> = { value: T } | { problem: string };

/** A setting read by `read`, from either form; a problem becomes a synth error naming the setting. */
const setting = <T>(read: (value: unknown) => Read<T>) =>
  z.pipe(
    z.unknown(),
    z.transform((value: unknown, ctx): T => {
      const result = read(value);
      if ("value" in result) return result.value;
      ctx.issues.push({
        code: "custom",
        message: `${result.problem} (got ${JSON.stringify(value)})`,
        input: value,
      });
      return z.NEVER;
    }),
  );

/** A JSON number, or a string that is exactly a decimal number (no "", " ", "1e3", "0x10"). */
function numberOf(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "string" && /^[+-]?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return undefined;
}

const readBoolean = (value: unknown): Read<boolean> => {
  if (value === true || value === "true") return { value: true };
  if (value === false || value === "false") return { value: false };
  return { problem: "must be true or false" };
};

const retentionPeriods = Object.values(RetentionDays).filter(
  (value): value is number => typeof value === "number",
);

const readRetentionDays = (value: unknown): Read<number> => {
  const days = numberOf(value);
  if (days === undefined || !Number.isInteger(days)) return { problem: "must be a whole number of days" };
  if (!retentionPeriods.includes(days)) {
    return { problem: `must be one of CloudWatch's retention periods: ${retentionPeriods.join(", ")}` };
  }
  return { value: days };
};

const readRate = (value: unknown): Read<number> => {
  const rate = numberOf(value);
  return rate !== undefined && rate > 0
    ? { value: rate }
    : { problem: "must be a number of requests per second above 0" };
};

const readBurst = (value: unknown): Read<number> => {
  const burst = numberOf(value);
  return burst !== undefined && Number.isInteger(burst) && burst >= 1
    ? { value: burst }
    : { problem: "must be a whole number of requests, 1 or more" };
};

/** A whole number of at least `minimum`, from either form. */
const readWhole =
  (minimum: number) =>
  (value: unknown): Read<number> => {
    const number = numberOf(value);
    return number !== undefined && Number.isInteger(number) && number >= minimum
      ? { value: number }
      : { problem: `must be a whole number, ${minimum} or more` };
  };

/** Comma-separated (`-c bedrockModelIds=a,b`) or a JSON list; each id checked as the stack will grant it. */
const readModelIds = (value: unknown): Read<string[]> => {
  const items = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : undefined;
  if (!items || items.some((item) => typeof item !== "string")) {
    return { problem: "must be a comma-separated list of Bedrock model ids" };
  }
  const ids = items.map((item: string) => item.trim()).filter(Boolean);
  const problems = ids.map(bedrockModelProblem).filter((problem) => problem !== undefined);
  return problems.length > 0 ? { problem: problems.join("; ") } : { value: ids };
};

export const stageConfigSchema = z.object({
  /** Lower-case letters, digits and dashes; names the stack (`ChatbotApi-<stage>`) and its resources. */
  stage: z._default(z.string().check(z.regex(/^[a-z][a-z0-9-]{0,20}$/)), "dev"),
  /** Keep the table and the key on `cdk destroy` (default: only for stage `prod`). */
  retainData: z.optional(setting(readBoolean)),
  /** Bedrock model ids, inference-profile ids or ARNs the chatbots may use; the message Lambda may invoke only these. */
  bedrockModelIds: z._default(setting(readModelIds), []),
  /** Optional custom domain (a host name with a v1 marker, e.g. api-v1.example.com) and its ACM certificate. */
  domainName: z.optional(z.string().check(z.regex(/^[a-z0-9.-]+$/))),
  certificateArn: z.optional(z.string().check(z.regex(/^arn:aws[a-z-]*:acm:/))),
  /**
   * Stage-wide gateway throttle (requests/s, burst), checked before any authorizer runs: a flood is
   * refused before it uses Lambda concurrency. Its 429 has the gateway's own body, so the defaults sit
   * well above what the keys' own limits let through in normal use (docs/operations.md).
   */
  throttleRateLimit: z._default(setting(readRate), 1_000),
  throttleBurstLimit: z._default(setting(readBurst), 2_000),
  logRetentionDays: z._default(setting(readRetentionDays), 30),
  /**
   * Whether admins may point an OpenAI-compatible engine at a model server of their choosing
   * (`allowed`), or only operators set servers (`forbidden`; admins still pick the model and paste
   * the key). Either way every model call passes the outbound-address guard.
   */
  customModelServers: z._default(z.enum(["allowed", "forbidden"]), "allowed"),
  /** Let anyone create a console account with their e-mail (off: people are invited). */
  selfSignUp: z._default(setting(readBoolean), false),
  /** An e-mail address subscribed to the stage's alarm topic (it confirms the subscription once). */
  alarmEmail: z.optional(z.string().check(z.regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/))),
  /** Record an AWS X-Ray trace segment of every function invocation (Lambda active tracing). */
  tracing: z._default(setting(readBoolean), false),
  /** The account's Lambda concurrency quota in the stage's region; alarms at 80 % of it. */
  accountConcurrencyLimit: z._default(setting(readWhole(10)), 1_000),
  /** Concurrency reserved for each authorizer, so a flood elsewhere cannot starve them (0: none). */
  authorizerReservedConcurrency: z._default(setting(readWhole(0)), 50),
  /** The stream function's reserved concurrency: its cap (0: uncapped). */
  streamReservedConcurrency: z._default(setting(readWhole(0)), 100),
  /** A WAF web ACL with a rate-based rule in front of the HTTP API and the console's distribution. */
  waf: z._default(setting(readBoolean), false),
  /** Requests one IP address may send in any 5 minutes before the web ACL blocks it. */
  wafRateLimit: z._default(setting(readWhole(10)), 2_000),
  /** A verified SES identity (an address or an address at a verified domain) Cognito sends its mail from. */
  sesFromAddress: z.optional(z.string().check(z.regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/))),
  /** The SES identity's region, when it is not the stack's (Cognito supports a few; see docs/operations.md). */
  sesRegion: z.optional(z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d$/))),
  /** TOTP multi-factor sign-in for console users: off or optional (`required` is refused: the console cannot enrol people yet). */
  consoleMfa: z._default(z.enum(["off", "optional", "required"]), "off"),
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
  if (config.consoleMfa === "required") {
    // Cognito would answer every first sign-in with MFA_SETUP, which the console cannot answer yet:
    // nobody could sign in. `required` can only be chosen when a pool is created, so it waits for the
    // console's enrolment rather than be set on a pool it would lock.
    throw new Error(
      'Invalid stage configuration: consoleMfa: required would lock every person out of the console, which cannot enrol anyone in an authenticator app yet; use optional (docs/operations.md, "Console sign-in")',
    );
  }
  if ("throttleRateLimit" in context !== "throttleBurstLimit" in context) {
    throw new Error("Invalid stage configuration: throttleRateLimit and throttleBurstLimit go together");
  }
  return { ...config, retainData: config.retainData ?? config.stage === "prod" };
}
