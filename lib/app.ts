/** Builds the CDK app (used by bin/app.ts and by the template tests, so both check the same thing). */
import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { ApiStack } from "./api-stack.ts";
import { parseStageConfig } from "./stage-config.ts";

const configKeys = [
  "stage",
  "retainData",
  "bedrockModelIds",
  "domainName",
  "certificateArn",
  "throttleRateLimit",
  "throttleBurstLimit",
  "logRetentionDays",
  "selfSignUp",
  "alarmEmail",
  "tracing",
  "accountConcurrencyLimit",
  "authorizerReservedConcurrency",
  "streamReservedConcurrency",
  "waf",
  "wafRateLimit",
  "sesFromAddress",
  "sesRegion",
  "consoleMfa",
  "customModelServers",
] as const;

export function buildApp(context: Record<string, unknown> = {}): { app: App; stack: ApiStack } {
  const app = new App({ context });
  const config = parseStageConfig(
    Object.fromEntries(
      configKeys.map((key) => [key, app.node.tryGetContext(key)]).filter(([, value]) => value !== undefined),
    ),
  );
  const stack = new ApiStack(app, `ChatbotApi-${config.stage}`, {
    config,
    description: `Chatbot Conversation API (${config.stage})`,
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
