/**
 * The whole service as one stack per stage: an HTTP API whose routes come from lib/routes.ts, one
 * Lambda per route (Node.js 24, arm64, bundled by a local esbuild), a Lambda authorizer, the
 * streaming message function behind a function URL of its own (an HTTP API cannot stream), one
 * DynamoDB table, and a KMS key for look-up tool credentials. Every function gets its own role with
 * exactly the table actions its route declares.
 */
import { resolve } from "node:path";
import {
  AssetHashType,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Token,
  Validations,
} from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import {
  ApiMapping,
  CfnAuthorizer,
  DomainName,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  HttpStage,
  LogGroupLogDestination,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { Certificate } from "aws-cdk-lib/aws-certificatemanager";
import { AttributeType, BillingMode, ProjectionType, Table } from "aws-cdk-lib/aws-dynamodb";
import { Effect, ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import {
  Architecture,
  Code,
  FunctionUrlAuthType,
  InvokeMode,
  Function as LambdaFunction,
  Runtime,
} from "aws-cdk-lib/aws-lambda";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { bedrockInvokeGrant, parseBedrockModel, regionOf } from "./bedrock-access.ts";
import { bundleFunctionSync, handlerFile } from "./bundling.ts";
import {
  authorizer,
  authorizerSettings,
  type FunctionDefinition,
  routeMiss,
  routes,
  streamRoute,
  type TableAction,
} from "./routes.ts";
import type { StageConfig } from "./stage-config.ts";
import { tableSchema } from "./table-schema.ts";

const root = resolve(import.meta.dirname, "..");

/**
 * What the operator CLI (`npm run admin -- … --table`) does on the table: reads, writes, the
 * transactions of conversation and key changes (ConditionCheckItem plus their parts), batched
 * listing and cleanup. Never Scan: every listing is a Query.
 */
const operatorTableActions: readonly TableAction[] = [
  "dynamodb:GetItem",
  "dynamodb:BatchGetItem",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:Query",
  "dynamodb:BatchWriteItem",
  "dynamodb:ConditionCheckItem",
];

export interface ApiStackProps extends StackProps {
  config: StageConfig;
}

export class ApiStack extends Stack {
  readonly table: Table;
  readonly functions = new Map<string, LambdaFunction>();

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { config } = props;
    const removalPolicy = config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.table = new Table(this, "Table", {
      partitionKey: { name: tableSchema.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableSchema.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableSchema.timeToLiveAttribute,
      deletionProtection: config.retainData,
      removalPolicy,
    });
    for (const index of tableSchema.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.KEYS_ONLY,
      });
    }

    const toolCredentialsKey = new Key(this, "ToolCredentialsKey", {
      description: `Encrypts look-up tool credentials of the chatbot API (${config.stage})`,
      enableKeyRotation: true,
      removalPolicy,
    });

    const environment: Record<string, string> = {
      TABLE_NAME: this.table.tableName,
      LOG_LEVEL: "info",
      BEDROCK_REGION: this.region,
      MODEL_SECRETS: `secretsmanager:${modelSecretPrefix(config.stage)}`,
      TOOL_CREDENTIALS_KEY_ID: toolCredentialsKey.keyArn,
    };

    const build = (definition: FunctionDefinition): LambdaFunction => {
      const fn = this.lambda(definition, config, environment);
      for (const grant of definition.grants ?? []) {
        switch (grant) {
          case "bedrock:invoke-configured-models":
            this.grantBedrockModels(fn, config.bedrockModelIds);
            break;
          case "secrets:read-model-keys": {
            const modelSecrets = `arn:${this.partition}:secretsmanager:${this.region}:${this.account}:secret:${modelSecretPrefix(config.stage)}*`;
            fn.addToRolePolicy(
              new PolicyStatement({ actions: ["secretsmanager:GetSecretValue"], resources: [modelSecrets] }),
            );
            Validations.of(fn.role ?? fn).acknowledge({
              id: `AwsSolutions::AwsSolutions-IAM5[Resource::${this.asNagShowsIt(modelSecrets)}]`,
              reason:
                "Model API keys are secrets the operator creates after deployment under this stage's prefix; the function may read only those.",
            });
            break;
          }
          case "kms:decrypt-tool-credentials":
            toolCredentialsKey.grantDecrypt(fn);
            break;
        }
      }
      this.functions.set(definition.id, fn);
      return fn;
    };

    const authorizerFn = build(authorizer);
    const apiKeyAuthorizer = new HttpLambdaAuthorizer("ApiKeyAuthorizer", authorizerFn, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: [...authorizerSettings.identitySource],
      resultsCacheTtl: Duration.seconds(authorizerSettings.resultsCacheTtlSeconds),
    });

    const api = new HttpApi(this, "HttpApi", {
      apiName: `chatbot-api-${config.stage}`,
      description: "Chatbot Conversation API",
      createDefaultStage: false,
      disableExecuteApiEndpoint: false,
    });
    // The $default route answers whatever no route matched; with the authorizer, so that a valid
    // key's 404 / 405 carries its rate state (functions/handlers/route-miss.ts).
    new HttpRoute(api, "DefaultRoute", {
      httpApi: api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration("RouteMissIntegration", build(routeMiss)),
      ...(routeMiss.auth === "apiKey" ? { authorizer: apiKeyAuthorizer } : {}),
    });

    const accessLogs = new LogGroup(this, "AccessLogs", {
      retention: config.logRetentionDays as RetentionDays, // one of them: checked by stage-config
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = new HttpStage(this, "DefaultStage", {
      httpApi: api,
      stageName: "$default",
      autoDeploy: true,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        // Only HTTP API variables: there is no authorizer latency here (that is a REST API
        // variable; its Lambda's Duration metric tells it), and `$context.authorizer.<key>`
        // reads a key of our authorizer's context, such as its verdict.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: "$context.requestId",
            time: "$context.requestTime",
            routeKey: "$context.routeKey",
            status: "$context.status",
            latencyMs: "$context.responseLatency",
            integrationLatencyMs: "$context.integrationLatency",
            integrationStatus: "$context.integrationStatus",
            integrationError: "$context.integrationErrorMessage",
            authOutcome: "$context.authorizer.outcome",
            authorizerError: "$context.authorizer.error",
            gatewayError: "$context.error.message",
            ip: "$context.identity.sourceIp",
          }),
        ),
      },
      ...(config.throttleRateLimit !== undefined && config.throttleBurstLimit !== undefined
        ? { throttle: { rateLimit: config.throttleRateLimit, burstLimit: config.throttleBurstLimit } }
        : {}),
    });

    for (const route of routes) {
      const fn = build(route);
      const [added] = api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${route.id}Integration`, fn),
        ...(route.auth === "apiKey" ? { authorizer: apiKeyAuthorizer } : {}),
      });
      if (route.auth === "none" && added) {
        Validations.of(added).acknowledge({
          id: "AwsSolutions::AwsSolutions-APIG4",
          reason: `${route.method} ${route.path} is public by the API contract (SPEC.md §4, CONTRACT.md §1).`,
        });
      }
    }
    // CDK always writes IdentitySource; with none, the property must be absent altogether.
    const cfnAuthorizer = api.node
      .findAll()
      .find((construct): construct is CfnAuthorizer => construct instanceof CfnAuthorizer);
    cfnAuthorizer?.addPropertyDeletionOverride("IdentitySource");

    let publicUrl = stage.url;
    if (config.domainName && config.certificateArn) {
      const domain = new DomainName(this, "CustomDomain", {
        domainName: config.domainName,
        certificate: Certificate.fromCertificateArn(this, "Certificate", config.certificateArn),
      });
      new ApiMapping(this, "CustomDomainMapping", { api, domainName: domain, stage });
      publicUrl = `https://${config.domainName}/`;
      new CfnOutput(this, "CustomDomainTarget", {
        value: domain.regionalDomainName,
        description: "Point the custom domain's DNS (CNAME/alias) here.",
      });
    }

    // POST /api/message/stream: a function URL in response-streaming mode. Its AuthType is NONE
    // because the function checks the bearer key (and takes the rate-limit token) itself, with the
    // authorizer's code; every other path or method on it is answered 404 / 405 by the function.
    const streamUrl = build(streamRoute).addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      invokeMode: InvokeMode.RESPONSE_STREAM,
    });

    new CfnOutput(this, "ApiUrl", { value: publicUrl, description: "Base URL of the API." });
    new CfnOutput(this, "StreamUrl", {
      value: streamUrl.url,
      description: "Base URL of the streaming endpoint: POST {StreamUrl}api/message/stream.",
    });
    new CfnOutput(this, "TableName", { value: this.table.tableName, description: "The single table." });
    new CfnOutput(this, "ToolCredentialsKeyArn", {
      value: toolCredentialsKey.keyArn,
      description: "KMS key for look-up tool credentials (the operator CLI needs it).",
    });
    // The operators' rights as one policy to attach to their role or user, so nobody needs
    // broader DynamoDB or KMS rights to run the CLI against a deployed stage.
    const operatorPolicy = new ManagedPolicy(this, "OperatorPolicy", {
      description: `Operator CLI of the chatbot API (${config.stage}): its table and tool-credentials key only`,
      statements: [
        new PolicyStatement({ actions: [...operatorTableActions], resources: [this.table.tableArn] }),
        new PolicyStatement({
          actions: ["dynamodb:Query"],
          resources: this.indexArns(),
        }),
        // GenerateDataKey seals credentials (tools add/update); Decrypt opens them (tools test).
        new PolicyStatement({
          actions: ["kms:GenerateDataKey", "kms:Decrypt"],
          resources: [toolCredentialsKey.keyArn],
        }),
      ],
    });
    new CfnOutput(this, "OperatorPolicyArn", {
      value: operatorPolicy.managedPolicyArn,
      description: "Attach to the operators' IAM role or user to run the admin CLI against this stage.",
    });
    new CfnOutput(this, "ModelSecretPrefix", {
      value: modelSecretPrefix(config.stage),
      description: "Create OpenAI-compatible API key secrets under this name prefix.",
    });
  }

  /** The table's index ARNs: the only resources an index Query is granted on. */
  private indexArns(): string[] {
    return tableSchema.globalSecondaryIndexes.map(
      (index) => `${this.table.tableArn}/index/${index.indexName}`,
    );
  }

  /**
   * Lets `fn` invoke exactly the configured models (lib/bedrock-access.ts says what each kind
   * needs), and acknowledges each wildcard resource that needs by its exact cdk-nag finding.
   */
  private grantBedrockModels(fn: LambdaFunction, modelIds: readonly string[]): void {
    for (const modelId of modelIds) {
      const model = parseBedrockModel(modelId);
      if ("problem" in model)
        throw new Error(`Invalid stage configuration: bedrockModelIds: ${model.problem}`);
      const modelRegion = regionOf(model);
      if (modelRegion && !Token.isUnresolved(this.region) && modelRegion !== this.region) {
        throw new Error(
          `Invalid stage configuration: bedrockModelIds: ${modelId} is in ${modelRegion}, but the functions call Bedrock in ${this.region}`,
        );
      }
      const grant = bedrockInvokeGrant(model, {
        partition: this.partition,
        region: this.region,
        account: this.account,
      });
      for (const statement of grant.statements) fn.addToRolePolicy(statement);
      for (const { resource, reason } of grant.wildcards) {
        Validations.of(fn.role ?? fn).acknowledge({
          id: `AwsSolutions::AwsSolutions-IAM5[Resource::${this.asNagShowsIt(resource)}]`,
          reason,
        });
      }
    }
  }

  /**
   * A resource as cdk-nag prints it in a finding id: the stack's partition, region and account
   * as `<AWS::…>` while they are tokens (an environment-agnostic synth), literally once known
   * (`cdk deploy` with credentials sets them).
   */
  private asNagShowsIt(resource: string): string {
    const shown: [string, string][] = [
      [this.partition, "<AWS::Partition>"],
      [this.region, "<AWS::Region>"],
      [this.account, "<AWS::AccountId>"],
    ];
    return shown.reduce(
      (text, [value, placeholder]) =>
        Token.isUnresolved(value) ? text.split(value).join(placeholder) : text,
      resource,
    );
  }

  private lambda(
    definition: FunctionDefinition,
    config: StageConfig,
    environment: Record<string, string>,
  ): LambdaFunction {
    const logGroup = new LogGroup(this, `${definition.id}Logs`, {
      retention: config.logRetentionDays as RetentionDays, // one of them: checked by stage-config
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new Role(this, `${definition.id}Role`, {
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
          resources: [this.table.tableArn],
        }),
      );
    }
    if (definition.index && definition.index.length > 0) {
      role.addToPolicy(
        new PolicyStatement({
          actions: [...definition.index],
          resources: this.indexArns(),
        }),
      );
    }

    return new LambdaFunction(this, definition.id, {
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
              bundleFunctionSync(resolve(root, definition.entry), outputDir);
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
      environment,
    });
  }
}

/** Where operators put model API keys: one prefix per stage, the only secrets the message Lambda can read. */
export const modelSecretPrefix = (stage: string): string => `chatbot-api/${stage}/models/`;
