#!/usr/bin/env node
/** The CDK app: `npx cdk deploy -c stage=<name> [-c bedrockModelIds=… -c domainName=… -c certificateArn=…]`. */
import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { ApiStack } from "#lib/api-stack";
import { parseStageConfig } from "#lib/stage-config";

const app = new App();
const config = parseStageConfig({
  stage: app.node.tryGetContext("stage"),
  retainData: app.node.tryGetContext("retainData"),
  bedrockModelIds: app.node.tryGetContext("bedrockModelIds"),
  domainName: app.node.tryGetContext("domainName"),
  certificateArn: app.node.tryGetContext("certificateArn"),
  throttleRateLimit: app.node.tryGetContext("throttleRateLimit"),
  throttleBurstLimit: app.node.tryGetContext("throttleBurstLimit"),
  logRetentionDays: app.node.tryGetContext("logRetentionDays"),
});

new ApiStack(app, `ChatbotApi-${config.stage}`, {
  config,
  description: `Chatbot Conversation API (${config.stage})`,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
