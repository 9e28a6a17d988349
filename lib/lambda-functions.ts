/**
 * How one function definition (lib/routes.ts, lib/event-sources.ts) becomes a Lambda, in whichever
 * stack hosts it (lib/concerns.ts): its log group, its own role with exactly the table actions it
 * declares, the function (Node.js 24, arm64, bundled by the local esbuild), and its extra grants on
 * the shared resources the root stack owns. The root stack and every concern's nested stack build
 * their functions with `deployFunction`, so a function is the same wherever it lives.
 */
import { resolve } from "node:path";
import { AssetHashType, Duration, RemovalPolicy, Stack, Token, Validations } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, type IAlarmAction, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import type { UserPool } from "aws-cdk-lib/aws-cognito";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { Effect, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { Key } from "aws-cdk-lib/aws-kms";
import { Architecture, Code, Function as LambdaFunction, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { TITAN_V2 } from "../functions/knowledge/models.ts";
import { bedrockInvokeGrant, isThirdPartyModel, parseBedrockModel } from "./bedrock-access.ts";
import { bundleFunctionSync, handlerFile } from "./bundling.ts";
import { eventFunctions, queues } from "./event-sources.ts";
import { logDataProtectionPolicy } from "./log-protection.ts";
import { allFunctions, type ExtraGrant, type FunctionDefinition } from "./routes.ts";
import type { StageConfig } from "./stage-config.ts";
import { tableSchema } from "./table-schema.ts";

const root = resolve(import.meta.dirname, "..");
/** Every function's entry: bundled together on the first function's bundling (bundleFunctionSync). */
const everyEntry = [...allFunctions, ...eventFunctions].map((definition) => resolve(root, definition.entry));

/** What the root stack owns and every function may be given access to. */
export interface SharedResources {
  config: StageConfig;
  table: Table;
  toolCredentialsKey: Key;
  webhookSecretsKey: Key;
  modelKeysKey: Key;
  widgetSecretsKey: Key;
  userPool: UserPool;
  /** The queues of lib/event-sources.ts, by id. */
  queues: ReadonlyMap<string, Queue>;
  /** Every function's environment variables. */
  environment: Readonly<Record<string, string>>;
  /** Where every alarm goes: the stage's alarm topic. */
  alarmAction: IAlarmAction;
}

/** A grant a concern stack gives from resources of its own; `false` leaves it to the shared ones. */
export type GrantHandler = (fn: LambdaFunction, grant: ExtraGrant) => boolean;

export interface DeployOptions {
  /** Variables a concern stack adds for its own resources. */
  environment?: Readonly<Record<string, string>>;
  grant?: GrantHandler;
  /** Concurrency reserved for (and capping) the function; absent or 0: the account's pool. */
  reservedConcurrency?: number;
}

/** Deploys `definition` in `scope`'s stack. */
export function deployFunction(
  scope: Construct,
  definition: FunctionDefinition,
  shared: SharedResources,
  options: DeployOptions = {},
): LambdaFunction {
  const { config } = shared;
  const logGroup = createLogGroup(scope, `${definition.id}Logs`, config);
  const role = new Role(scope, `${definition.id}Role`, {
    assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
    description: `Runs the ${definition.id} function (least privilege).`,
  });
  role.addToPolicy(
    new PolicyStatement({
      actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
      resources: [logGroup.logGroupArn],
    }),
  );
  if (definition.table.length > 0) {
    role.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: [...definition.table],
        resources: [shared.table.tableArn],
      }),
    );
  }
  if (definition.index && definition.index.length > 0) {
    role.addToPolicy(
      new PolicyStatement({ actions: [...definition.index], resources: indexArns(shared.table) }),
    );
  }

  const fn = new LambdaFunction(scope, definition.id, {
    // Bundled by the local esbuild into index.mjs and its chunks (lib/bundling.ts), no Docker; the
    // image is only named because CDK asks for one, and is never pulled.
    code: Code.fromAsset(root, {
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        image: Runtime.NODEJS_24_X.bundlingImage,
        // Also tells the bundles of different functions apart in CDK's bundling cache.
        environment: { FUNCTION_ENTRY: definition.entry },
        local: {
          tryBundle: (outputDir) => {
            bundleFunctionSync(resolve(root, definition.entry), outputDir, everyEntry);
            return true;
          },
        },
      },
    }),
    handler: `${handlerFile.replace(/\.mjs$/, "")}.handler`,
    runtime: Runtime.NODEJS_24_X,
    architecture: Architecture.ARM_64,
    memorySize: definition.memoryMb,
    timeout: Duration.seconds(definition.timeoutSeconds),
    role,
    logGroup,
    environment: { ...shared.environment, ...options.environment },
    tracing: config.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
    ...(options.reservedConcurrency ? { reservedConcurrentExecutions: options.reservedConcurrency } : {}),
  });
  if (config.tracing) {
    Validations.of(role).acknowledge({
      id: "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
      reason:
        "Lambda active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions (CDK grants them with tracing on).",
    });
  }
  functionAlarms(scope, definition.id, fn, shared.alarmAction);
  for (const grant of definition.grants ?? []) {
    if (!options.grant?.(fn, grant)) grantShared(fn, grant, shared);
  }
  return fn;
}

/**
 * A log group of the stage: its retention, kept when the stack is deleted for a stage that keeps its
 * data (prod), and the masking policy of lib/log-protection.ts.
 */
export function createLogGroup(scope: Construct, id: string, config: StageConfig): LogGroup {
  return new LogGroup(scope, id, {
    retention: config.logRetentionDays as RetentionDays, // one of them: checked by stage-config
    removalPolicy: config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    dataProtectionPolicy: logDataProtectionPolicy(),
  });
}

/**
 * Every function's two alarms (docs/operations.md, "Alarms"): errors (a crash, a timeout, or an
 * event function's failed batch: our handlers answer every request themselves) and throttles (the
 * account's or its reserved concurrency exhausted).
 */
function functionAlarms(scope: Construct, id: string, fn: LambdaFunction, action: IAlarmAction): void {
  const period = Duration.minutes(5);
  const alarms = [
    new Alarm(scope, `${id}ErrorsAlarm`, {
      alarmDescription: `${id}: 5 or more invocation errors in 5 minutes (docs/operations.md, Alarms, "<Function>ErrorsAlarm").`,
      metric: fn.metricErrors({ period, statistic: "Sum" }),
      threshold: 5,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
    new Alarm(scope, `${id}ThrottlesAlarm`, {
      alarmDescription: `${id}: invocations throttled in 5 minutes (docs/operations.md, Alarms, "<Function>ThrottlesAlarm").`,
      metric: fn.metricThrottles({ period, statistic: "Sum" }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
  ];
  for (const alarm of alarms) {
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
  }
}

/** The table's index ARNs: the only resources an index Query is granted on. */
export function indexArns(table: Table): string[] {
  return tableSchema.globalSecondaryIndexes.map((index) => `${table.tableArn}/index/${index.indexName}`);
}

/** Where operators put model API keys: one prefix per stage, the only secrets the message Lambda can read. */
export const modelSecretPrefix = (stage: string): string => `chatbot-api/${stage}/models/`;

function queueOf(shared: SharedResources, id: string): Queue {
  const queue = shared.queues.get(id);
  if (!queue) throw new Error(`queue ${id} missing`);
  return queue;
}

function grantShared(fn: LambdaFunction, grant: ExtraGrant, shared: SharedResources): void {
  const stack = Stack.of(fn);
  switch (grant) {
    case "bedrock:invoke-configured-models":
      // The chat models the operator configured, and the embedding model retrieval uses.
      grantBedrockModels(fn, [...new Set([...shared.config.bedrockModelIds, TITAN_V2])]);
      return;
    case "secrets:read-model-keys": {
      const modelSecrets = `arn:${stack.partition}:secretsmanager:${stack.region}:${stack.account}:secret:${modelSecretPrefix(shared.config.stage)}*`;
      fn.addToRolePolicy(
        new PolicyStatement({ actions: ["secretsmanager:GetSecretValue"], resources: [modelSecrets] }),
      );
      Validations.of(fn.role ?? fn).acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::${asNagShowsIt(stack, modelSecrets)}]`,
        reason:
          "Model API keys are secrets the operator creates after deployment under this stage's prefix; the function may read only those.",
      });
      return;
    }
    case "kms:decrypt-tool-credentials":
      shared.toolCredentialsKey.grantDecrypt(fn);
      return;
    case "kms:encrypt-tool-credentials":
      shared.toolCredentialsKey.grant(fn, "kms:GenerateDataKey");
      return;
    case "cognito:invite-people":
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ["cognito-idp:AdminCreateUser", "cognito-idp:AdminGetUser"],
          resources: [shared.userPool.userPoolArn],
        }),
      );
      return;
    case "kms:decrypt-webhook-secrets":
      shared.webhookSecretsKey.grantDecrypt(fn);
      return;
    case "kms:seal-webhook-secrets":
      shared.webhookSecretsKey.grant(fn, "kms:GenerateDataKey");
      return;
    case "kms:seal-model-keys":
      shared.modelKeysKey.grant(fn, "kms:GenerateDataKey");
      return;
    case "kms:decrypt-model-keys":
      shared.modelKeysKey.grantDecrypt(fn);
      return;
    case "kms:decrypt-widget-secrets":
      shared.widgetSecretsKey.grantDecrypt(fn);
      return;
    case "kms:seal-widget-secrets":
      shared.widgetSecretsKey.grant(fn, "kms:GenerateDataKey");
      return;
    case "sqs:send-webhook-deliveries":
      queueOf(shared, queues.webhookDeliveries.id).grantSendMessages(fn);
      return;
    case "sqs:send-conversation-timers":
      queueOf(shared, queues.conversationTimers.id).grantSendMessages(fn);
      return;
  }
}

/**
 * Lets `fn` invoke exactly the configured models (lib/bedrock-access.ts says what each kind
 * needs), and acknowledges each wildcard resource that needs by its exact cdk-nag finding.
 */
function grantBedrockModels(fn: LambdaFunction, modelIds: readonly string[]): void {
  const stack = Stack.of(fn);
  for (const modelId of modelIds) {
    const model = parseBedrockModel(modelId);
    if ("problem" in model) throw new Error(`Invalid stage configuration: bedrockModelIds: ${model.problem}`);
    const grant = bedrockInvokeGrant(model, {
      partition: stack.partition,
      region: stack.region,
      account: stack.account,
    });
    for (const statement of grant.statements) fn.addToRolePolicy(statement);
    for (const { resource, reason } of grant.wildcards) {
      Validations.of(fn.role ?? fn).acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::${asNagShowsIt(stack, resource)}]`,
        reason,
      });
    }
  }
  // A third-party model's first call in the account subscribes to it in AWS Marketplace, with the
  // caller's permissions (Bedrock user guide, "Request access to models").
  const models = modelIds.map(parseBedrockModel);
  if (models.some((model) => !("problem" in model) && isThirdPartyModel(model))) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: [
          "aws-marketplace:ViewSubscriptions",
          "aws-marketplace:Subscribe",
          "aws-marketplace:Unsubscribe",
        ],
        resources: ["*"],
      }),
    );
    Validations.of(fn.role ?? fn).acknowledge({
      id: "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
      reason:
        "AWS Marketplace's subscription actions have no resource-level permissions; Bedrock needs them on a third-party model's first call in the account (Bedrock user guide, Request access to models).",
    });
  }
}

/**
 * A resource as cdk-nag prints it in a finding id: the stack's partition, region and account
 * as `<AWS::…>` while they are tokens (an environment-agnostic synth), literally once known
 * (`cdk deploy` with credentials sets them).
 */
export function asNagShowsIt(stack: Stack, resource: string): string {
  const shown: [string, string][] = [
    [stack.partition, "<AWS::Partition>"],
    [stack.region, "<AWS::Region>"],
    [stack.account, "<AWS::AccountId>"],
  ];
  return shown.reduce(
    (text, [value, placeholder]) => (Token.isUnresolved(value) ? text.split(value).join(placeholder) : text),
    resource,
  );
}
