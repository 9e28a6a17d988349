/**
 * The whole service as one stack per stage, split by concern into nested stacks (lib/concerns.ts;
 * CloudFormation allows 500 resources a stack). The root keeps what clients and data hold on to: one
 * DynamoDB table, the KMS keys (look-up tool credentials, webhook secrets), the Cognito user pool
 * people sign in to the console with, the webhook pipeline's queues, the HTTP API with every route
 * of lib/routes.ts and its two Lambda authorizers (API keys; the management API), and the streaming
 * message function behind a function URL of its own (an HTTP API cannot stream). Every other
 * function (Node.js 24, arm64, bundled by a local esbuild) lives in its concern's nested stack
 * (lib/concern-stack.ts) with its own role, exactly the table actions it declares, and its route's
 * integration; the console's hosting is a nested stack of its own (lib/console-stack.ts).
 *
 * The webhook pipeline comes from lib/event-sources.ts: the table's stream feeds the EventFanout
 * function, which queues deliveries (SQS) for the WebhookDelivery function; its own KMS key seals
 * endpoints' signing secrets.
 */
import {
  Annotations,
  CfnOutput,
  Duration,
  Fn,
  RemovalPolicy,
  Stack,
  type StackProps,
  Token,
  Validations,
} from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import {
  ApiMapping,
  AuthorizerPayloadVersion,
  CfnAuthorizer,
  CfnRoute,
  DomainName,
  HttpApi,
  HttpAuthorizer,
  HttpAuthorizerType,
  HttpStage,
  LogGroupLogDestination,
} from "aws-cdk-lib/aws-apigatewayv2";
import { Certificate } from "aws-cdk-lib/aws-certificatemanager";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import {
  AccountRecovery,
  Mfa,
  UserPool,
  UserPoolClient,
  UserPoolEmail,
  VerificationEmailStyle,
} from "aws-cdk-lib/aws-cognito";
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from "aws-cdk-lib/aws-dynamodb";
import { ManagedPolicy, PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import {
  FilterCriteria,
  FunctionUrlAuthType,
  InvokeMode,
  type Function as LambdaFunction,
  StartingPosition,
} from "aws-cdk-lib/aws-lambda";
import { DynamoEventSource, SqsDlq, SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { parseBedrockModel, regionOf, regionProblem } from "./bedrock-access.ts";
import { ConcernStack, type ConcernStackProps, integrateRoute } from "./concern-stack.ts";
import { type ConcernStackName, concernStackNames, concernStacks } from "./concerns.ts";
import { ConsoleStack } from "./console-stack.ts";
import {
  allQueues,
  eventFanout,
  eventFunctions,
  failureQueueIds,
  queueSources,
  queues,
  streamSources,
} from "./event-sources.ts";
import { cognitoIssuer, identity } from "./identity.ts";
import {
  createLogGroup,
  deployFunction,
  indexArns,
  modelSecretPrefix,
  type SharedResources,
} from "./lambda-functions.ts";
import { MonitoringStack } from "./monitoring-stack.ts";
import {
  allFunctions,
  authorizer,
  authorizerSettings,
  corsPreflight,
  type FunctionDefinition,
  manageAuthorizer,
  type RouteDefinition,
  routeMiss,
  routes,
  streamRoute,
  type TableAction,
  widgetPaths,
} from "./routes.ts";
import type { StageConfig } from "./stage-config.ts";
import { tableSchema } from "./table-schema.ts";

/**
 * The nested-stack class of a concern that owns resources of its own (a file under lib/ extending
 * ConcernStack); a concern not named here gets a plain ConcernStack.
 */
const concernStackClasses: Partial<
  Record<
    ConcernStackName,
    new (
      scope: Construct,
      id: ConcernStackName,
      props: ConcernStackProps,
    ) => ConcernStack
  >
> = {};

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
      stream: StreamViewType[tableSchema.streamViewType],
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

    // People who sign in to the console (lib/identity.ts defines the pool; the local runtime
    // creates the same one in cognito-local).
    const userPool = new UserPool(this, "People", {
      userPoolName: `${identity.userPoolName}-${config.stage}`,
      selfSignUpEnabled: config.selfSignUp,
      signInAliases: { email: true, username: false },
      autoVerify: { email: true },
      signInCaseSensitive: false,
      passwordPolicy: {
        minLength: identity.passwordPolicy.minimumLength,
        requireLowercase: identity.passwordPolicy.requireLowercase,
        requireUppercase: identity.passwordPolicy.requireUppercase,
        requireDigits: identity.passwordPolicy.requireDigits,
        requireSymbols: identity.passwordPolicy.requireSymbols,
        tempPasswordValidity: Duration.days(identity.passwordPolicy.temporaryPasswordValidityDays),
      },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      userInvitation: { emailSubject: identity.invitation.subject, emailBody: identity.invitation.body },
      userVerification: { emailStyle: VerificationEmailStyle.CODE },
      // Cognito's own mail stops at about 50 messages a day: production sends through SES.
      email: config.sesFromAddress
        ? UserPoolEmail.withSES({
            fromEmail: config.sesFromAddress,
            sesRegion: config.sesRegion ?? this.region,
            sesVerifiedDomain: config.sesFromAddress.split("@")[1],
          })
        : UserPoolEmail.withCognito(),
      mfa: { off: Mfa.OFF, optional: Mfa.OPTIONAL, required: Mfa.REQUIRED }[config.consoleMfa],
      ...(config.consoleMfa === "off" ? {} : { mfaSecondFactor: { otp: true, sms: false } }),
      deletionProtection: config.retainData,
      removalPolicy,
    });
    const consoleClient = new UserPoolClient(this, "ConsoleClient", {
      userPool,
      userPoolClientName: identity.consoleClient.name,
      generateSecret: identity.consoleClient.generateSecret,
      authFlows: { userPassword: true, userSrp: false, adminUserPassword: false, custom: false },
      accessTokenValidity: Duration.minutes(identity.consoleClient.accessTokenValidityMinutes),
      idTokenValidity: Duration.minutes(identity.consoleClient.idTokenValidityMinutes),
      refreshTokenValidity: Duration.days(identity.consoleClient.refreshTokenValidityDays),
      preventUserExistenceErrors: identity.consoleClient.preventUserExistenceErrors,
      enableTokenRevocation: true,
      // No hosted UI: CDK's OAuth defaults (implicit flow, an example.com callback) stay off.
      disableOAuth: true,
    });
    Validations.of(userPool).acknowledge(
      {
        id: "AwsSolutions::AwsSolutions-COG2",
        reason:
          "MFA is the operator's choice (-c consoleMfa=optional, TOTP); required is refused until the console enrols people in an authenticator app (docs/operations.md, Console sign-in).",
      },
      {
        id: "AwsSolutions::AwsSolutions-COG8",
        reason:
          "Threat protection needs Cognito's Plus feature plan, a per-user cost an operator can choose; the password policy and invitation-only sign-up stand meanwhile.",
      },
    );
    const webhookSecretsKey = new Key(this, "WebhookSecretsKey", {
      description: `Encrypts webhook signing secrets of the chatbot API (${config.stage})`,
      enableKeyRotation: true,
      removalPolicy,
    });
    const modelKeysKey = new Key(this, "ModelKeysKey", {
      description: `Encrypts the model API keys admins give their chatbots (${config.stage})`,
      enableKeyRotation: true,
      removalPolicy,
    });
    const widgetSecretsKey = new Key(this, "WidgetSecretsKey", {
      description: `Encrypts the website widgets' identity secrets of the chatbot API (${config.stage})`,
      enableKeyRotation: true,
      removalPolicy,
    });
    // What the console's CloudFront origins send as X-Origin-Verify, so the API may believe the
    // viewer's address they pass (functions/http/client-address.ts): the stack's own id, a random
    // UUID no one outside the account sees.
    const originVerifySecret = Fn.select(2, Fn.split("/", this.stackId));

    // Webhook queues: encrypted at rest (SQS-managed keys), TLS only, dead letters kept 14 days.
    const queueById = new Map<string, Queue>();
    for (const definition of [...allQueues].sort((a, b) => Number(!!a.deadLetter) - Number(!!b.deadLetter))) {
      const deadLetter = definition.deadLetter ? queueById.get(definition.deadLetter.queueId) : undefined;
      if (definition.deadLetter && !deadLetter)
        throw new Error(`queue ${definition.deadLetter.queueId} missing`);
      const queue = new Queue(this, definition.id, {
        visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
        retentionPeriod: Duration.seconds(definition.retentionSeconds),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        ...(definition.deadLetter && deadLetter
          ? { deadLetterQueue: { queue: deadLetter, maxReceiveCount: definition.deadLetter.maxReceiveCount } }
          : {}),
      });
      queueById.set(definition.id, queue);
    }
    const queueFor = (id: string): Queue => {
      const queue = queueById.get(id);
      if (!queue) throw new Error(`queue ${id} missing`);
      return queue;
    };
    Validations.of(queueFor(queues.eventFanoutFailures.id)).acknowledge({
      id: "AwsSolutions::AwsSolutions-SQS3",
      reason:
        "This queue is the fan-out's on-failure destination: it holds descriptions of stream batches that could not be processed, for an operator to inspect; a dead-letter queue behind it would have nothing to add.",
    });
    const deliveryQueue = queueFor(queues.webhookDeliveries.id);
    const timerQueue = queueFor(queues.conversationTimers.id);

    const environment: Record<string, string> = {
      TABLE_NAME: this.table.tableName,
      LOG_LEVEL: "info",
      BEDROCK_REGION: this.region,
      MODEL_SECRETS: `secretsmanager:${modelSecretPrefix(config.stage)}`,
      TOOL_CREDENTIALS_KEY_ID: toolCredentialsKey.keyArn,
      COGNITO_USER_POOL_ID: userPool.userPoolId,
      COGNITO_CLIENT_ID: consoleClient.userPoolClientId,
      COGNITO_ISSUER: cognitoIssuer(this.region, userPool.userPoolId),
      WEBHOOK_SECRETS_KEY_ID: webhookSecretsKey.keyArn,
      MODEL_KEYS_KEY_ID: modelKeysKey.keyArn,
      // The engines this stage offers (agent/engine-options.ts): the Bedrock list admins pick from,
      // and whether they may choose a model server.
      BEDROCK_MODEL_IDS: config.bedrockModelIds.join(","),
      CUSTOM_MODEL_SERVERS: config.customModelServers,
      WEBHOOK_QUEUE_URL: deliveryQueue.queueUrl,
      CONVERSATION_TIMER_QUEUE_URL: timerQueue.queueUrl,
      // The metrics' Stage dimension (functions/observability/metrics.ts).
      STAGE: config.stage,
      WIDGET_SECRETS_KEY_ID: widgetSecretsKey.keyArn,
      ORIGIN_VERIFY_SECRET: originVerifySecret,
    };

    // Every alarm of the stage notifies this topic (docs/operations.md); the root keeps it, as its
    // e-mail subscriptions are confirmed by people.
    const alarmTopic = new Topic(this, "AlarmTopic", {
      displayName: `Chatbot API alarms (${config.stage})`,
      enforceSSL: true,
    });
    Validations.of(alarmTopic).acknowledge({
      id: "AwsSolutions::AwsSolutions-SNS2",
      reason:
        "Alarm notifications carry alarm names and metric values, no customer data; CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key, and a key of our own would protect nothing here.",
    });
    if (config.alarmEmail) alarmTopic.addSubscription(new EmailSubscription(config.alarmEmail));
    const alarmAction = new SnsAction(alarmTopic);

    this.checkBedrockModels(config.bedrockModelIds);
    const shared: SharedResources = {
      config,
      table: this.table,
      toolCredentialsKey,
      webhookSecretsKey,
      modelKeysKey,
      widgetSecretsKey,
      userPool,
      queues: queueById,
      environment,
      alarmAction,
    };

    // Each function in the stack its definition names (lib/concerns.ts): the few the root holds on
    // to here, every other in its concern's nested stack.
    const concernStacksByName = new Map(
      concernStackNames.map((name) => {
        const StackClass = concernStackClasses[name] ?? ConcernStack;
        return [name, new StackClass(this, name, { shared, description: concernStacks[name] })] as const;
      }),
    );
    for (const definition of [...allFunctions, ...eventFunctions]) {
      const fn =
        definition.stack === "Root"
          ? deployFunction(this, definition, shared, {
              reservedConcurrency: reservedConcurrencyOf(definition),
            })
          : concernStacksByName.get(definition.stack)?.addFunction(definition);
      if (!fn) throw new Error(`${definition.id}: no stack ${definition.stack}`);
      this.functions.set(definition.id, fn);
    }
    /** Reserved concurrency for the root's functions (docs/operations.md, "Shared capacity"). */
    function reservedConcurrencyOf(definition: FunctionDefinition): number {
      if (definition.id === authorizer.id || definition.id === manageAuthorizer.id) {
        return config.authorizerReservedConcurrency;
      }
      return definition.id === streamRoute.id ? config.streamReservedConcurrency : 0;
    }
    const functionOf = (definition: FunctionDefinition): LambdaFunction => {
      const fn = this.functions.get(definition.id);
      if (!fn) throw new Error(`function ${definition.id} missing`);
      return fn;
    };

    const api = new HttpApi(this, "HttpApi", {
      apiName: `chatbot-api-${config.stage}`,
      description: "Chatbot Conversation API",
      createDefaultStage: false,
      disableExecuteApiEndpoint: false,
    });
    const authorizerIds = {
      apiKey: this.lambdaAuthorizer(api, "ApiKeyAuthorizer", functionOf(authorizer)),
      manage: this.lambdaAuthorizer(api, "ManageAuthorizer", functionOf(manageAuthorizer)),
    };

    // The routes stay here, whichever stack serves them: a route key is unique in its API, so a route
    // that moved stacks would be created before its old self is deleted, and refused (409). Each is at
    // the construct path CDK's HttpApi.addRoutes gave it, so its logical id never changes.
    const addRoute = (
      constructId: string,
      routeKey: string,
      definition: FunctionDefinition & Pick<RouteDefinition, "auth">,
      path: string | undefined,
    ): CfnRoute => {
      const integrationId = integrateRoute(functionOf(definition), api, definition.id, path);
      const authorizerId =
        definition.auth === "apiKey" || definition.auth === "countApiKey"
          ? authorizerIds.apiKey
          : definition.auth === "manage"
            ? authorizerIds.manage
            : undefined;
      return new CfnRoute(new Construct(api, constructId), "Resource", {
        apiId: api.apiId,
        routeKey,
        target: `integrations/${integrationId}`,
        authorizationType: authorizerId ? "CUSTOM" : "NONE",
        ...(authorizerId ? { authorizerId } : {}),
      });
    };
    // The $default route answers whatever no route matched; with the authorizer, so that a valid
    // key's 404 / 405 carries its rate state (functions/handlers/route-miss.ts).
    addRoute("DefaultRoute", "$default", routeMiss, undefined);
    for (const route of routes) {
      const added = addRoute(
        `${route.method}${route.path}`,
        `${route.method} ${route.path}`,
        route,
        route.path,
      );
      if (route.auth === "none") {
        Validations.of(added).acknowledge({
          id: "AwsSolutions::AwsSolutions-APIG4",
          reason: `${route.method} ${route.path} is public by design: a website visitor's session starts without a key (docs/api.md).`,
        });
      }
    }
    // The widget's CORS preflights: an OPTIONS route on each path it calls, without an authorizer
    // (a preflight carries no credentials). Not the HTTP API's own CORS configuration, which would
    // answer for every route, those of API keys and /manage/ too (docs/architecture.md).
    for (const path of widgetPaths.keys()) {
      const integrationId = integrateRoute(
        functionOf(corsPreflight),
        api,
        `${corsPreflight.id}${pathId(path)}`,
        path,
      );
      const preflight = new CfnRoute(new Construct(api, `OPTIONS${path}`), "Resource", {
        apiId: api.apiId,
        routeKey: `OPTIONS ${path}`,
        target: `integrations/${integrationId}`,
        authorizationType: "NONE",
      });
      Validations.of(preflight).acknowledge({
        id: "AwsSolutions::AwsSolutions-APIG4",
        reason: `OPTIONS ${path} is a CORS preflight, which browsers send without credentials; it answers 204 and nothing else.`,
      });
    }
    // CDK always writes IdentitySource; with none, the property must be absent altogether.
    for (const cfnAuthorizer of api.node
      .findAll()
      .filter((construct): construct is CfnAuthorizer => construct instanceof CfnAuthorizer)) {
      cfnAuthorizer.addPropertyDeletionOverride("IdentitySource");
    }

    const accessLogs = createLogGroup(this, "AccessLogs", config);
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
      throttle: { rateLimit: config.throttleRateLimit, burstLimit: config.throttleBurstLimit },
    });

    for (const source of streamSources) {
      const fn = functionOf(source.function);
      fn.addEventSource(
        new DynamoEventSource(this.table, {
          startingPosition: StartingPosition[source.startingPosition],
          batchSize: source.batchSize,
          ...(source.maxBatchingWindowSeconds > 0
            ? { maxBatchingWindow: Duration.seconds(source.maxBatchingWindowSeconds) }
            : {}),
          bisectBatchOnError: source.bisectBatchOnFunctionError,
          retryAttempts: source.retryAttempts,
          maxRecordAge: Duration.seconds(source.maxRecordAgeSeconds),
          parallelizationFactor: source.parallelizationFactor,
          filters: source.filters.map((pattern) => FilterCriteria.filter(pattern)),
          onFailure: new SqsDlq(queueFor(source.onFailureQueueId)),
        }),
      );
      Validations.of(fn.role ?? fn).acknowledge({
        id: "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        reason:
          "dynamodb:ListStreams has no resource-level permissions; reading the records is granted on this table's stream only.",
      });
    }
    for (const source of queueSources) {
      const fn = functionOf(source.function);
      fn.addEventSource(
        new SqsEventSource(queueFor(source.queueId), {
          batchSize: source.batchSize,
          ...(source.maxBatchingWindowSeconds > 0
            ? { maxBatchingWindow: Duration.seconds(source.maxBatchingWindowSeconds) }
            : {}),
          maxConcurrency: source.maxConcurrency,
          reportBatchItemFailures: source.reportBatchItemFailures,
        }),
      );
    }

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
    const streamUrl = functionOf(streamRoute).addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      invokeMode: InvokeMode.RESPONSE_STREAM,
    });

    // The console: its own nested stack (this stack is near CloudFormation's resource limit).
    const consoleHosting = new ConsoleStack(this, "Console", {
      apiId: api.apiId,
      apiBaseUrl: publicUrl,
      streamFunctionUrl: streamUrl,
      userPoolId: userPool.userPoolId,
      clientId: consoleClient.userPoolClientId,
      originVerifySecret,
      removalPolicy,
      config,
      ...(config.waf ? { waf: { rateLimit: config.wafRateLimit } } : {}),
    });
    new CfnOutput(this, "ConsoleUrl", {
      value: consoleHosting.consoleUrl,
      description: "The console (sign in with a person of the user pool); the API is on the same domain.",
    });
    new CfnOutput(this, "ConsoleStreamUrl", {
      value: consoleHosting.consoleUrl,
      description:
        "The streaming endpoint on the console's domain (through CloudFront): POST {ConsoleStreamUrl}api/message/stream.",
    });

    const monitoring = new MonitoringStack(this, "Monitoring", {
      description: "Alarms on what the stage's parts share, and its dashboard.",
      stage: config.stage,
      api,
      table: this.table,
      streamFunction: functionOf(streamRoute),
      eventFanout: functionOf(eventFanout),
      failureQueues: [
        ...failureQueueIds.map(queueFor),
        ...[...concernStacksByName.values()].flatMap((concern) => concern.failureQueues),
      ],
      accountConcurrencyLimit: config.accountConcurrencyLimit,
      alarmAction,
    });
    new CfnOutput(this, "AlarmTopicArn", {
      value: alarmTopic.topicArn,
      description:
        "Every alarm of the stage notifies this SNS topic (subscribe more addresses or a pager to it).",
    });
    new CfnOutput(this, "DashboardName", {
      value: monitoring.dashboard.dashboardName,
      description: "The stage's CloudWatch dashboard.",
    });

    new CfnOutput(this, "ApiUrl", { value: publicUrl, description: "Base URL of the API." });
    new CfnOutput(this, "StreamUrl", {
      value: streamUrl.url,
      description: "Base URL of the streaming endpoint: POST {StreamUrl}api/message/stream.",
    });
    new CfnOutput(this, "TableName", { value: this.table.tableName, description: "The single table." });
    new CfnOutput(this, "UserPoolId", {
      value: userPool.userPoolId,
      description: "The console's user pool (operators grant operator rights to its people with the CLI).",
    });
    new CfnOutput(this, "ConsoleClientId", {
      value: consoleClient.userPoolClientId,
      description: "The console's app client: sign in with USER_PASSWORD_AUTH against this client.",
    });
    new CfnOutput(this, "CognitoIssuer", {
      value: cognitoIssuer(this.region, userPool.userPoolId),
      description:
        "Issuer of the console's access tokens; Cognito's endpoint is https://cognito-idp.<region>.amazonaws.com/.",
    });
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
          resources: indexArns(this.table),
        }),
        // GenerateDataKey seals credentials (tools add/update); Decrypt opens them (tools test).
        new PolicyStatement({
          actions: ["kms:GenerateDataKey", "kms:Decrypt"],
          resources: [toolCredentialsKey.keyArn],
        }),
        // Find people by e-mail (operators grant), invite them (members invite).
        new PolicyStatement({
          actions: ["cognito-idp:AdminGetUser", "cognito-idp:AdminCreateUser"],
          resources: [userPool.userPoolArn],
        }),
      ],
    });
    new CfnOutput(this, "WidgetUrl", {
      value: `${consoleHosting.consoleUrl}widget.js`,
      description:
        'The website widget: <script src="{WidgetUrl}" data-chatbot-id="{chatbot_id}" async></script>.',
    });
    new CfnOutput(this, "WebhookSecretsKeyArn", {
      value: webhookSecretsKey.keyArn,
      description: "KMS key sealing webhook signing secrets.",
    });
    new CfnOutput(this, "WebhookDeadLettersQueueUrl", {
      value: queueFor(queues.webhookDeliveriesDeadLetters.id).queueUrl,
      description:
        "Delivery messages that repeatedly failed to be processed (not endpoint failures): alarm on its depth.",
    });
    new CfnOutput(this, "EventFanoutFailuresQueueUrl", {
      value: queueFor(queues.eventFanoutFailures.id).queueUrl,
      description:
        "Stream batches the fan-out could not process (shard and sequence numbers): alarm on its depth.",
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

  /**
   * Refuses, at synth, a model the functions cannot call: a full ARN in another region than the
   * stack's (Bedrock is called in the stack's region).
   */
  private checkBedrockModels(modelIds: readonly string[]): void {
    if (modelIds.length === 0) {
      Annotations.of(this).addWarningV2(
        "chatbot:no-bedrock-model",
        'No Bedrock model is granted (bedrockModelIds is empty): a chatbot with the bedrock engine will answer every turn with its fallback reply. Deploy with -c bedrockModelIds=<model or profile id>,… (docs/operations.md, "Bedrock").',
      );
    }
    for (const modelId of modelIds) {
      const model = parseBedrockModel(modelId);
      if ("problem" in model)
        throw new Error(`Invalid stage configuration: bedrockModelIds: ${model.problem}`);
      const wrongGeography = Token.isUnresolved(this.region) ? undefined : regionProblem(model, this.region);
      if (wrongGeography) throw new Error(`Invalid stage configuration: bedrockModelIds: ${wrongGeography}`);
      const modelRegion = regionOf(model);
      if (modelRegion && !Token.isUnresolved(this.region) && modelRegion !== this.region) {
        throw new Error(
          `Invalid stage configuration: bedrockModelIds: ${modelId} is in ${modelRegion}, but the functions call Bedrock in ${this.region}`,
        );
      }
    }
  }

  /**
   * A Lambda authorizer of the HTTP API, at the construct path CDK's HttpLambdaAuthorizer gave it
   * (so its logical id stays), set up as lib/routes.ts's authorizerSettings say.
   */
  private lambdaAuthorizer(api: HttpApi, id: string, fn: LambdaFunction): string {
    const httpAuthorizer = new HttpAuthorizer(api, id, {
      httpApi: api,
      type: HttpAuthorizerType.LAMBDA,
      authorizerName: id,
      identitySource: [...authorizerSettings.identitySource],
      enableSimpleResponses: true,
      payloadFormatVersion: AuthorizerPayloadVersion.VERSION_2_0,
      authorizerUri: `arn:${this.partition}:apigateway:${this.region}:lambda:path/2015-03-31/functions/${fn.functionArn}/invocations`,
      resultsCacheTtl: Duration.seconds(authorizerSettings.resultsCacheTtlSeconds),
    });
    fn.addPermission(`${id}Permission`, {
      principal: new ServicePrincipal("apigateway.amazonaws.com"),
      sourceArn: this.formatArn({
        service: "execute-api",
        resource: api.apiId,
        resourceName: `authorizers/${httpAuthorizer.authorizerId}`,
      }),
    });
    return httpAuthorizer.authorizerId;
  }
}

/** A construct id from a route path: `/api/conversation/{conversation_id}` → `ApiConversationConversationId`. */
function pathId(path: string): string {
  return path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("");
}
