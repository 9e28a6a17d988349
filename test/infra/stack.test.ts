/**
 * The synthesized stack (aws-cdk-lib/assertions): routes from the route table, the authorizer's
 * wiring, the table's keys, least-privilege IAM, and cdk-nag's AwsSolutions checks.
 */
import { Match, Template } from "aws-cdk-lib/assertions";
import { HttpRoute, HttpRouteKey } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { beforeAll, describe, expect, it } from "vitest";
import { toAuthorizerContext } from "#functions/http/authorizer-context";
import { buildApp } from "#lib/app";
import { concernStackNames, resourceBudget } from "#lib/concerns";
import {
  conversationTimer,
  eventFanout,
  eventFunctions,
  queueSources,
  queues,
  streamSources,
  webhookDelivery,
} from "#lib/event-sources";
import {
  allFunctions,
  authorizer,
  corsPreflight,
  manageAuthorizer,
  routeMiss,
  routes,
  streamRoute,
  widgetPaths,
} from "#lib/routes";
import deployedLogicalIds from "./deployed-logical-ids.json" with { type: "json" };
import { type Resources, synthesize } from "./templates.ts";

// Bundling is skipped in tests (it is exercised by the local runtime and `cdk synth`).
const context = { "aws:cdk:bundling-stacks": [], stage: "test", bedrockModelIds: "anthropic.claude-test-v1" };

/** The service's resources in one template: the root stack's and its concerns' nested stacks'. */
let template: Template;
/** The root stack's own template: its outputs. */
let root: Template;
let resources: Resources;
let synthesized: ReturnType<typeof synthesize>;

beforeAll(() => {
  synthesized = synthesize(context);
  root = synthesized.root;
  // The console's hosting has tests of its own (console-stack.test.ts).
  resources = Object.fromEntries(
    Object.entries(synthesized.resources).filter(([id]) => synthesized.stackOf[id] !== "Console"),
  );
  template = Template.fromJSON({ Resources: resources });
});

const ofType = (type: string) => Object.values(resources).filter((resource) => resource.Type === type);

describe("the HTTP API", () => {
  it("has exactly the route table's routes, the widget's preflights, and $default for everything else", () => {
    const keys = ofType("AWS::ApiGatewayV2::Route").map((route) => route.Properties.RouteKey);
    expect(keys.sort()).toEqual(
      [
        ...routes.map((route) => `${route.method} ${route.path}`),
        ...[...widgetPaths.keys()].map((path) => `OPTIONS ${path}`),
        "$default",
      ].sort(),
    );
  });

  it("puts the API-key authorizer on the apiKey routes and $default, the management one on the manage routes", () => {
    const authorizerIds = Object.fromEntries(
      Object.entries(resources)
        .filter(([, resource]) => resource.Type === "AWS::ApiGatewayV2::Authorizer")
        .map(([id, resource]) => [id, resource.Properties.Name]),
    );
    for (const route of ofType("AWS::ApiGatewayV2::Route")) {
      const key = String(route.Properties.RouteKey);
      const definition =
        key === "$default"
          ? routeMiss
          : key.startsWith("OPTIONS ")
            ? { ...corsPreflight, auth: "none" as const }
            : routes.find((candidate) => `${candidate.method} ${candidate.path}` === key);
      const expected =
        definition?.auth === "apiKey" || definition?.auth === "countApiKey"
          ? ["CUSTOM", "ApiKeyAuthorizer"]
          : definition?.auth === "manage"
            ? ["CUSTOM", "ManageAuthorizer"]
            : ["NONE", undefined];
      const authorizerRef = (route.Properties.AuthorizerId as { Ref?: string } | undefined)?.Ref;
      expect([
        route.Properties.RouteKey,
        route.Properties.AuthorizationType,
        authorizerRef ? authorizerIds[authorizerRef] : undefined,
      ]).toEqual([route.Properties.RouteKey, ...expected]);
    }
    template.hasResourceProperties("AWS::ApiGatewayV2::Route", {
      RouteKey: "$default",
      AuthorizationType: "CUSTOM",
    });
  });

  it("wires both authorizers with simple responses, uncached, with no identity source", () => {
    template.resourceCountIs("AWS::ApiGatewayV2::Authorizer", 2);
    for (const name of ["ApiKeyAuthorizer", "ManageAuthorizer"]) {
      template.hasResourceProperties("AWS::ApiGatewayV2::Authorizer", {
        Name: name,
        AuthorizerType: "REQUEST",
        AuthorizerPayloadFormatVersion: "2.0",
        EnableSimpleResponses: true,
        AuthorizerResultTtlInSeconds: 0,
        IdentitySource: Match.absent(),
      });
    }
  });

  it("uses payload format 2.0 for every integration and logs access on the $default stage", () => {
    for (const integration of ofType("AWS::ApiGatewayV2::Integration")) {
      expect(integration.Properties.PayloadFormatVersion).toBe("2.0");
    }
    template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "$default",
      AutoDeploy: true,
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
  });
});

/**
 * The `$context` variables AWS documents for HTTP API access logs ("Customize HTTP API access
 * logs", API Gateway developer guide). REST-only ones such as `$context.authorizer.latency` or
 * `$context.authorize.status` are not on it: on an HTTP API `$context.authorizer.<name>` reads a
 * key of the Lambda authorizer's own context instead.
 */
const httpApiLogVariables = new Set([
  "$context.accountId",
  "$context.apiId",
  "$context.authorizer.error",
  "$context.awsEndpointRequestId",
  "$context.awsEndpointRequestId2",
  "$context.customDomain.basePathMatched",
  "$context.dataProcessed",
  "$context.domainName",
  "$context.domainPrefix",
  "$context.error.message",
  "$context.error.messageString",
  "$context.error.responseType",
  "$context.extendedRequestId",
  "$context.httpMethod",
  "$context.identity.accountId",
  "$context.identity.caller",
  "$context.identity.cognitoAuthenticationProvider",
  "$context.identity.cognitoAuthenticationType",
  "$context.identity.cognitoIdentityId",
  "$context.identity.cognitoIdentityPoolId",
  "$context.identity.principalOrgId",
  "$context.identity.clientCert.clientCertPem",
  "$context.identity.clientCert.subjectDN",
  "$context.identity.clientCert.issuerDN",
  "$context.identity.clientCert.serialNumber",
  "$context.identity.clientCert.validity.notBefore",
  "$context.identity.clientCert.validity.notAfter",
  "$context.identity.sourceIp",
  "$context.identity.user",
  "$context.identity.userAgent",
  "$context.identity.userArn",
  "$context.integration.error",
  "$context.integration.integrationStatus",
  "$context.integration.latency",
  "$context.integration.requestId",
  "$context.integration.status",
  "$context.integrationErrorMessage",
  "$context.integrationLatency",
  "$context.integrationStatus",
  "$context.path",
  "$context.protocol",
  "$context.requestId",
  "$context.requestTime",
  "$context.requestTimeEpoch",
  "$context.responseLatency",
  "$context.responseLength",
  "$context.routeKey",
  "$context.stage",
  "$context.status",
]);

describe("the access log", () => {
  it("uses only documented HTTP API variables, and authorizer context keys our authorizer sets", () => {
    const [stage] = ofType("AWS::ApiGatewayV2::Stage");
    if (!stage) throw new Error("the API has no stage");
    const format = (stage.Properties.AccessLogSettings as { Format: string }).Format;
    const variables = format.match(/\$context\.[A-Za-z0-9.]+/g) ?? [];
    expect(variables.length).toBeGreaterThan(5);
    const contextKeys = new Set(
      [
        toAuthorizerContext({
          kind: "rate_limited",
          organizationId: "o",
          keyId: "k",
          scope: "chat",
          rate: { limit: 1, remaining: 0, resetAt: 1 },
          retryAfterSeconds: 1,
        }),
        toAuthorizerContext({ kind: "invalid_key" }),
      ].flatMap((context) => Object.keys(context)),
    );
    const unknown = variables.filter((variable) => {
      if (httpApiLogVariables.has(variable)) return false;
      const key = /^\$context\.authorizer\.(\w+)$/.exec(variable)?.[1];
      return !(key && contextKeys.has(key));
    });
    expect(unknown).toEqual([]);
    // Valid JSON once API Gateway fills in the values.
    expect(() => JSON.parse(format.replace(/\$context\.[A-Za-z0-9.]+/g, "x"))).not.toThrow();
  });
});

describe("the functions", () => {
  it("are one Node.js 24 arm64 Lambda per route, plus the authorizer, the route-miss function and the webhook pipeline's two", () => {
    const functions = ofType("AWS::Lambda::Function");
    expect(functions).toHaveLength(allFunctions.length + eventFunctions.length);
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({ Runtime: "nodejs24.x", Architectures: ["arm64"] });
    }
  });

  it("set none of the local runtime's escape hatches (allow list, origin overrides, key file)", () => {
    for (const fn of ofType("AWS::Lambda::Function")) {
      const variables = Object.keys(
        (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {},
      );
      for (const local of [
        "OUTBOUND_ALLOW_PRIVATE",
        "TOOL_HTTP_ORIGIN_OVERRIDES",
        "TOOL_CREDENTIALS_KEY_FILE",
        "MODEL_KEYS_KEY_FILE",
      ]) {
        expect(variables).not.toContain(local);
      }
    }
  });

  it("each may use exactly the table and index actions its route declares, on the table and its indexes only", () => {
    for (const definition of [...allFunctions, ...eventFunctions]) {
      const policy = Object.entries(resources).find(
        ([id, resource]) =>
          resource.Type === "AWS::IAM::Policy" &&
          id.startsWith(`${definition.id}Role`) &&
          id.includes("Default"),
      )?.[1];
      const statements = (
        (policy?.Properties.PolicyDocument as { Statement: Record<string, unknown>[] })?.Statement ?? []
      )
        .filter((statement) => JSON.stringify(statement.Action).includes("dynamodb:"))
        // Reading the table's stream is the fan-out's event source, checked with the pipeline below.
        .filter(
          (statement) => !([statement.Action].flat() as string[]).every((action) => streamRead.has(action)),
        );
      const onIndex = (statement: Record<string, unknown>) =>
        JSON.stringify(statement.Resource).includes("/index/");
      const actions = statements
        .filter((statement) => !onIndex(statement))
        .flatMap((statement) => [statement.Action].flat() as string[]);
      const indexActions = statements
        .filter(onIndex)
        .flatMap((statement) => [statement.Action].flat() as string[]);
      expect([definition.id, actions.sort(), indexActions]).toEqual([
        definition.id,
        [...definition.table].sort(),
        [...(definition.index ?? [])],
      ]);
      for (const statement of statements.filter((statement) => !onIndex(statement))) {
        expect(statement.Resource).toEqual({ "Fn::GetAtt": [expect.stringMatching(/^Table/), "Arn"] });
      }
    }
  });

  it("lets only the invite functions create or find people, and only in the stage's user pool", () => {
    const statements = Object.entries(resources)
      .filter(([, resource]) => resource.Type === "AWS::IAM::Policy")
      .flatMap(([id, policy]) =>
        (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement.map(
          (statement) => [id, statement] as const,
        ),
      )
      .filter(([, statement]) => JSON.stringify(statement.Action).includes("cognito-idp:"));
    expect(statements.map(([id]) => id.replace(/RoleDefaultPolicy.*$/, "")).sort()).toEqual([
      "ManageCreateOrganization",
      "ManageInviteMember",
    ]);
    for (const [, statement] of statements) {
      expect(([statement.Action].flat() as string[]).sort()).toEqual([
        "cognito-idp:AdminCreateUser",
        "cognito-idp:AdminGetUser",
      ]);
      expect(statement.Resource).toEqual({ "Fn::GetAtt": [expect.stringMatching(/^People/), "Arn"] });
    }
  });

  it("gives the management authorizer its table actions and the user pool's issuer and console client", () => {
    const policy = Object.entries(resources).find(([id]) =>
      id.startsWith(`${manageAuthorizer.id}RoleDefaultPolicy`),
    )?.[1];
    if (!policy) throw new Error("the management authorizer has no policy");
    const actions = (
      policy.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }
    ).Statement.flatMap((statement) => [statement.Action].flat());
    expect(actions.sort()).toEqual([
      "dynamodb:GetItem",
      "dynamodb:Query",
      "dynamodb:UpdateItem",
      "logs:CreateLogStream",
      "logs:PutLogEvents",
    ]);
    const fn = Object.entries(resources).find(
      ([id, resource]) => resource.Type === "AWS::Lambda::Function" && id.startsWith(manageAuthorizer.id),
    )?.[1];
    if (!fn) throw new Error("the management authorizer has no function");
    const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.stringify(variables.COGNITO_ISSUER)).toContain("https://cognito-idp.");
    expect(variables.COGNITO_CLIENT_ID).toEqual({ Ref: expect.stringMatching(/^ConsoleClient/) });
  });

  it("grants nothing with a wildcard action, and Bedrock only on the configured model", () => {
    const statements = ofType("AWS::IAM::Policy").flatMap(
      (policy) => (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
    );
    for (const statement of statements) {
      for (const action of [statement.Action].flat() as string[]) expect(action).not.toContain("*");
    }
    const bedrock = statements.filter((statement) => JSON.stringify(statement.Action).includes("bedrock:"));
    expect(JSON.stringify(bedrock)).toContain("foundation-model/anthropic.claude-test-v1");
    expect(JSON.stringify(bedrock)).not.toContain("foundation-model/*");
  });

  it("gives the authorizer the table and nothing else beyond its logs", () => {
    const policy = Object.entries(resources).find(([id]) =>
      id.startsWith(`${authorizer.id}RoleDefaultPolicy`),
    )?.[1];
    if (!policy) throw new Error("the authorizer has no policy");
    const actions = (
      policy.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }
    ).Statement.flatMap((statement) => [statement.Action].flat());
    expect(actions.sort()).toEqual([
      "dynamodb:GetItem",
      "dynamodb:UpdateItem",
      "logs:CreateLogStream",
      "logs:PutLogEvents",
    ]);
  });
});

describe("the website widget", () => {
  it("answers CORS on its own paths only: OPTIONS routes without an authorizer, no API-wide CORS", () => {
    for (const api of ofType("AWS::ApiGatewayV2::Api"))
      expect(api.Properties.CorsConfiguration).toBeUndefined();
    const preflights = ofType("AWS::ApiGatewayV2::Route").filter((route) =>
      String(route.Properties.RouteKey).startsWith("OPTIONS "),
    );
    expect(preflights.map((route) => route.Properties.RouteKey).sort()).toEqual(
      [...widgetPaths.keys()].map((path) => `OPTIONS ${path}`).sort(),
    );
    for (const route of preflights) {
      expect(route.Properties.AuthorizationType).toBe("NONE");
      expect(route.Properties.AuthorizerId).toBeUndefined();
    }
    for (const path of widgetPaths.keys()) expect(path.startsWith("/manage")).toBe(false);
    // The stream's function URL has none either: the function answers its preflight itself.
    for (const url of ofType("AWS::Lambda::Url")) expect(url.Properties.Cors).toBeUndefined();
    // Each preflight integration may invoke the preflight function on its own path only.
    const permissions = ofType("AWS::Lambda::Permission").filter((permission) =>
      JSON.stringify(permission.Properties.FunctionName).includes(corsPreflight.id),
    );
    expect(permissions).toHaveLength(widgetPaths.size);
  });

  it("seals identity secrets with a key of its own, which only the session route opens and rotation seals", () => {
    const keyId = Object.entries(resources).find(
      ([id, resource]) => resource.Type === "AWS::KMS::Key" && id.startsWith("WidgetSecretsKey"),
    )?.[0];
    expect(keyId).toBeDefined();
    expect(resources[keyId ?? ""]?.Properties.EnableKeyRotation).toBe(true);
    const users = new Map<string, string[]>();
    for (const [id, resource] of Object.entries(resources)) {
      if (resource.Type !== "AWS::IAM::Policy") continue;
      for (const statement of (resource.Properties.PolicyDocument as { Statement: Record<string, unknown>[] })
        .Statement) {
        if (!JSON.stringify(statement.Resource ?? "").includes(keyId ?? "-")) continue;
        const role = id.replace(/Role.*$/, "").replace(/^.*\//, "");
        users.set(role, [...(users.get(role) ?? []), ...([statement.Action].flat() as string[])]);
      }
    }
    expect(Object.fromEntries(users)).toEqual({
      StartWidgetSession: ["kms:Decrypt"],
      ManageRotateWidgetIdentitySecret: ["kms:GenerateDataKey"],
    });
  });

  it("gives every function the origin secret the console's distribution sends", () => {
    for (const fn of ofType("AWS::Lambda::Function")) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.ORIGIN_VERIFY_SECRET).toBeDefined();
      expect(variables.WIDGET_SECRETS_KEY_ID).toBeDefined();
    }
  });
});

describe("the streaming endpoint", () => {
  it("is the stream function's URL: response streaming, checked by the function itself, named in the outputs", () => {
    const urls = ofType("AWS::Lambda::Url");
    expect(urls).toHaveLength(1);
    expect(urls[0]?.Properties).toMatchObject({ AuthType: "NONE", InvokeMode: "RESPONSE_STREAM" });
    const target = JSON.stringify(urls[0]?.Properties.TargetFunctionArn);
    expect(target).toContain(streamRoute.id);
    root.hasOutput("StreamUrl", {
      Value: { "Fn::GetAtt": [Match.stringLikeRegexp(`^${streamRoute.id}FunctionUrl`), "FunctionUrl"] },
    });
  });

  it("may be invoked through its URL by anyone, and only through it", () => {
    const permissions = ofType("AWS::Lambda::Permission").filter((permission) =>
      JSON.stringify(permission.Properties.FunctionName).includes(streamRoute.id),
    );
    expect(permissions.map((permission) => permission.Properties)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: "lambda:InvokeFunctionUrl",
          Principal: "*",
          FunctionUrlAuthType: "NONE",
        }),
        expect.objectContaining({
          Action: "lambda:InvokeFunction",
          Principal: "*",
          InvokedViaFunctionUrl: true,
        }),
      ]),
    );
    expect(permissions).toHaveLength(2);
  });

  it("has the message turn's grants, and the authorizer's table actions", () => {
    const sendMessage = routes.find((route) => route.id === "SendMessage");
    expect(streamRoute.grants).toEqual(sendMessage?.grants);
    expect([...streamRoute.table].sort()).toEqual(
      [...new Set([...(sendMessage?.table ?? []), ...authorizer.table])].sort(),
    );
  });
});

describe("the operators", () => {
  it("get one managed policy: the CLI's table actions, Query on the index, the tool key, nothing else", () => {
    const [policy, ...others] = ofType("AWS::IAM::ManagedPolicy");
    expect(others).toEqual([]);
    if (!policy) throw new Error("the stack has no operator policy");
    const statements = (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] })
      .Statement;
    const byResource = statements.map((statement) => [
      JSON.stringify(statement.Resource),
      ([statement.Action].flat() as string[]).sort(),
    ]);
    expect(byResource).toEqual([
      [
        expect.stringMatching(/^\{"Fn::GetAtt":\["Table[^"]*","Arn"\]\}$/),
        [
          "dynamodb:BatchGetItem",
          "dynamodb:BatchWriteItem",
          "dynamodb:ConditionCheckItem",
          "dynamodb:DeleteItem",
          "dynamodb:GetItem",
          "dynamodb:PutItem",
          "dynamodb:Query",
          "dynamodb:UpdateItem",
        ],
      ],
      [expect.stringMatching(/\/index\/GSI1".*\/index\/GSI2"/), ["dynamodb:Query"]],
      [
        expect.stringMatching(/^\{"Fn::GetAtt":\["ToolCredentialsKey[^"]*","Arn"\]\}$/),
        ["kms:Decrypt", "kms:GenerateDataKey"],
      ],
      [
        expect.stringMatching(/^\{"Fn::GetAtt":\["People[^"]*","Arn"\]\}$/),
        ["cognito-idp:AdminCreateUser", "cognito-idp:AdminGetUser"],
      ],
    ]);
    root.hasOutput("OperatorPolicyArn", {});
  });
});

const streamRead = new Set([
  "dynamodb:DescribeStream",
  "dynamodb:GetRecords",
  "dynamodb:GetShardIterator",
  "dynamodb:ListStreams",
]);

/** The statements of a function's role, as [resource, sorted actions] pairs (logs left out). */
function roleStatements(functionId: string): [string, string[]][] {
  const policy = Object.entries(resources).find(
    ([id, resource]) => resource.Type === "AWS::IAM::Policy" && id.startsWith(`${functionId}Role`),
  )?.[1];
  const statements =
    (policy?.Properties.PolicyDocument as { Statement: Record<string, unknown>[] })?.Statement ?? [];
  return statements
    .map((statement): [string, string[]] => [
      JSON.stringify(statement.Resource),
      ([statement.Action].flat() as string[]).sort(),
    ])
    .filter(([, actions]) => !actions.some((action) => action.startsWith("logs:")));
}

describe("the model keys admins paste", () => {
  const modelKeyActions = (functionId: string) =>
    roleStatements(functionId)
      .filter(([resource]) => resource.includes("ModelKeysKey"))
      .map(([, actions]) => actions);
  const sealers = ["ManageCreateChatbot", "ManageUpdateChatbot"];
  const openers = ["SendMessage", "StreamMessage", "ManageTestEngine"];

  it("are sealed where chatbots are saved and opened only where a model is called", () => {
    for (const id of sealers) expect([id, modelKeyActions(id)]).toEqual([id, [["kms:GenerateDataKey"]]]);
    for (const id of openers) expect([id, modelKeyActions(id)]).toEqual([id, [["kms:Decrypt"]]]);
    for (const definition of [...allFunctions, ...eventFunctions]) {
      if (sealers.includes(definition.id) || openers.includes(definition.id)) continue;
      expect([definition.id, modelKeyActions(definition.id)]).toEqual([definition.id, []]);
    }
  });

  it("tell the functions the stage's Bedrock models and whether admins choose model servers", () => {
    const fn = Object.entries(resources).find(
      ([id, resource]) => resource.Type === "AWS::Lambda::Function" && id.startsWith("ManageUpdateChatbot"),
    )?.[1];
    if (!fn) throw new Error("no ManageUpdateChatbot function");
    const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables).toMatchObject({
      BEDROCK_MODEL_IDS: "anthropic.claude-test-v1",
      CUSTOM_MODEL_SERVERS: "allowed",
    });
    expect(JSON.stringify(variables.MODEL_KEYS_KEY_ID)).toContain("ModelKeysKey");
  });
});

describe("the webhook pipeline", () => {
  it("streams the table's new and old images", () => {
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      StreamSpecification: { StreamViewType: "NEW_AND_OLD_IMAGES" },
    });
  });

  it("feeds the stream to the fan-out as lib/event-sources.ts says: filters, batching, bisect, bounded retries, failure queue", () => {
    const [source] = streamSources;
    if (!source) throw new Error("no stream source");
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: { "Fn::GetAtt": [Match.stringLikeRegexp("^Table"), "StreamArn"] },
      StartingPosition: source.startingPosition,
      BatchSize: source.batchSize,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: source.retryAttempts,
      MaximumRecordAgeInSeconds: source.maxRecordAgeSeconds,
      ParallelizationFactor: source.parallelizationFactor,
      FilterCriteria: { Filters: source.filters.map((pattern) => ({ Pattern: JSON.stringify(pattern) })) },
      DestinationConfig: {
        OnFailure: {
          Destination: { "Fn::GetAtt": [Match.stringLikeRegexp(`^${queues.eventFanoutFailures.id}`), "Arn"] },
        },
      },
    });
  });

  it("feeds the delivery queue to the delivery function in batches, with partial failures and a concurrency cap", () => {
    const [source] = queueSources;
    if (!source) throw new Error("no queue source");
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: { "Fn::GetAtt": [Match.stringLikeRegexp(`^${queues.webhookDeliveries.id}`), "Arn"] },
      BatchSize: source.batchSize,
      ScalingConfig: { MaximumConcurrency: source.maxConcurrency },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
  });

  it("encrypts every queue, refuses plain HTTP to them, and redrives poison messages to a dead-letter queue", () => {
    const all = ofType("AWS::SQS::Queue");
    expect(all).toHaveLength(Object.keys(queues).length);
    for (const queue of all) expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    template.hasResourceProperties("AWS::SQS::Queue", {
      VisibilityTimeout: queues.webhookDeliveries.visibilityTimeoutSeconds,
      RedrivePolicy: {
        deadLetterTargetArn: {
          "Fn::GetAtt": [Match.stringLikeRegexp(`^${queues.webhookDeliveriesDeadLetters.id}`), "Arn"],
        },
        maxReceiveCount: queues.webhookDeliveries.deadLetter.maxReceiveCount,
      },
    });
    const policies = ofType("AWS::SQS::QueuePolicy");
    expect(policies).toHaveLength(all.length);
    for (const policy of policies) {
      expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    }
  });

  it("lets the fan-out read the stream, queue deliveries and inactivity checks and report failed batches, and nothing else beyond its table actions", () => {
    const statements = roleStatements(eventFanout.id).filter(
      ([, actions]) => !actions.every((action) => action.startsWith("dynamodb:") && !streamRead.has(action)),
    );
    const send = ["sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"];
    expect(statements).toEqual(
      expect.arrayContaining([
        ['"*"', ["dynamodb:ListStreams"]],
        [
          expect.stringMatching(/"StreamArn"/),
          ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
        ],
        [expect.stringContaining(queues.webhookDeliveries.id), send],
        [expect.stringContaining(queues.eventFanoutFailures.id), send],
        [expect.stringContaining(queues.conversationTimers.id), send],
      ]),
    );
    expect(statements).toHaveLength(5);
  });

  it("lets the timer function consume and re-queue inactivity checks only, and change conversations", () => {
    const statements = roleStatements(conversationTimer.id);
    const sqs = statements.filter(([, actions]) => actions.some((action) => action.startsWith("sqs:")));
    for (const [resource] of sqs) expect(resource).toMatch(new RegExp(queues.conversationTimers.id));
    expect(statements.some(([, actions]) => actions.some((action) => action.startsWith("kms:")))).toBe(false);
    expect(conversationTimer.table).toEqual(["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem"]);
  });

  it("lets the delivery function consume and re-queue deliveries and open webhook secrets only", () => {
    const statements = roleStatements(webhookDelivery.id);
    const kms = statements.filter(([, actions]) => actions.some((action) => action.startsWith("kms:")));
    expect(kms).toEqual([[expect.stringMatching(/WebhookSecretsKey/), ["kms:Decrypt"]]]);
    const sqs = statements
      .filter(([, actions]) => actions.some((action) => action.startsWith("sqs:")))
      .map(([resource, actions]) => [resource, actions]);
    for (const [resource] of sqs) expect(resource).toMatch(new RegExp(queues.webhookDeliveries.id));
    expect(sqs.flatMap(([, actions]) => actions).sort()).toEqual(
      [
        "sqs:ChangeMessageVisibility",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "sqs:GetQueueAttributes",
        "sqs:GetQueueUrl",
        "sqs:GetQueueUrl",
        "sqs:ReceiveMessage",
        "sqs:SendMessage",
      ].sort(),
    );
  });
});

describe("the table", () => {
  it("is on demand with PK/SK, keys-only GSI1 and GSI2, TTL and point-in-time recovery", () => {
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      BillingMode: "PAY_PER_REQUEST",
      KeySchema: [
        { AttributeName: "PK", KeyType: "HASH" },
        { AttributeName: "SK", KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: "GSI1",
          KeySchema: [
            { AttributeName: "GSI1PK", KeyType: "HASH" },
            { AttributeName: "GSI1SK", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "KEYS_ONLY" },
        }),
        Match.objectLike({
          IndexName: "GSI2",
          KeySchema: [
            { AttributeName: "GSI2PK", KeyType: "HASH" },
            { AttributeName: "GSI2SK", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "KEYS_ONLY" },
        }),
      ],
      TimeToLiveSpecification: { AttributeName: "ttl", Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it("is destroyed with a test stage and retained (with deletion protection) for prod", () => {
    template.hasResource("AWS::DynamoDB::Table", { DeletionPolicy: "Delete" });
    const prod = Template.fromStack(buildApp({ ...context, stage: "prod" }).stack);
    prod.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({ DeletionProtectionEnabled: true }),
    });
  });

  it("is named in the outputs, with the API URL", () => {
    root.hasOutput("ApiUrl", {});
    root.hasOutput("StreamUrl", {});
    root.hasOutput("TableName", {});
  });
});

describe("the people", () => {
  it("sign in to a user pool by e-mail, invited only (no self sign-up) unless the stage turns it on", () => {
    template.hasResourceProperties("AWS::Cognito::UserPool", {
      UsernameAttributes: ["email"],
      AdminCreateUserConfig: Match.objectLike({ AllowAdminCreateUserOnly: true }),
      Policies: {
        PasswordPolicy: Match.objectLike({
          MinimumLength: 12,
          RequireLowercase: true,
          RequireUppercase: true,
          RequireNumbers: true,
          RequireSymbols: true,
        }),
      },
      AccountRecoverySetting: { RecoveryMechanisms: [{ Name: "verified_email", Priority: 1 }] },
    });
    Template.fromStack(buildApp({ ...context, selfSignUp: "true" }).stack).hasResourceProperties(
      "AWS::Cognito::UserPool",
      { AdminCreateUserConfig: Match.objectLike({ AllowAdminCreateUserOnly: false }) },
    );
  });

  it("use a console client without a secret, signing in with USER_PASSWORD_AUTH and refresh tokens", () => {
    template.hasResourceProperties("AWS::Cognito::UserPoolClient", {
      GenerateSecret: false,
      ExplicitAuthFlows: ["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
      PreventUserExistenceErrors: "ENABLED",
    });
    root.hasOutput("UserPoolId", {});
    root.hasOutput("ConsoleClientId", {});
    root.hasOutput("CognitoIssuer", {});
  });
});

describe("configuration and checks", () => {
  it("passes cdk-nag's AwsSolutions checks", () => {
    const { app } = buildApp(context);
    expect(() => app.synth()).not.toThrow();
  });

  it("would fail cdk-nag for an unauthenticated route nobody acknowledged", () => {
    const { app, stack } = buildApp(context);
    const api = stack.node.findChild("HttpApi") as import("aws-cdk-lib/aws-apigatewayv2").HttpApi;
    const fn = stack.functions.get("Ping");
    if (!fn) throw new Error("Ping function missing");
    new HttpRoute(stack, "Unguarded", {
      httpApi: api,
      routeKey: HttpRouteKey.with("/api/unguarded"),
      integration: new HttpLambdaIntegration("UnguardedIntegration", fn),
    });
    expect(() => app.synth()).toThrow(/AwsSolutions-APIG4/);
  });

  it("refuses an invalid stage configuration at synth", () => {
    expect(() => buildApp({ ...context, stage: "Bad Stage" })).toThrow(/Invalid stage configuration/);
    expect(() => buildApp({ ...context, domainName: "api-v1.example.com" })).toThrow(/go together/);
  });

  it("maps an optional custom domain (a v1 host name) to the stage", () => {
    const withDomain = Template.fromStack(
      buildApp({
        ...context,
        domainName: "api-v1.example.com",
        certificateArn: "arn:aws:acm:us-east-1:123456789012:certificate/abc",
      }).stack,
    );
    withDomain.hasResourceProperties("AWS::ApiGatewayV2::DomainName", { DomainName: "api-v1.example.com" });
    withDomain.resourceCountIs("AWS::ApiGatewayV2::ApiMapping", 1);
    withDomain.hasOutput("ApiUrl", { Value: "https://api-v1.example.com/" });
  });
});

describe("stacks", () => {
  const budget = (share: number) => Math.floor(resourceBudget.limit * share);

  it("keep 40 % of CloudFormation's 500 resources free in the root stack, and 25 % in each nested stack", () => {
    const { root: rootTemplate, nested } = synthesized;
    const count = (stackTemplate: Template) => Object.keys(stackTemplate.toJSON().Resources).length;
    expect(count(rootTemplate)).toBeLessThanOrEqual(budget(resourceBudget.root));
    expect([...nested.keys()].sort()).toEqual([...concernStackNames, "Console", "Monitoring"].sort());
    for (const [name, stackTemplate] of nested) {
      expect([name, count(stackTemplate) <= budget(resourceBudget.nested)]).toEqual([name, true]);
    }
  });

  it("deploy each function in the stack its definition names", () => {
    const { stackOf } = synthesized;
    for (const definition of [...allFunctions, ...eventFunctions]) {
      const ids = Object.keys(resources).filter(
        (id) =>
          resources[id]?.Type === "AWS::Lambda::Function" &&
          new RegExp(`^${definition.id}[0-9A-F]{8}$`).test(id),
      );
      expect([definition.id, ids.map((id) => stackOf[id] || "Root")]).toEqual([
        definition.id,
        [definition.stack],
      ]);
    }
  });

  it("keep every stateful resource, route and published URL of the first deployment in the root, under its logical id", () => {
    const rootResources = root.toJSON().Resources as Resources;
    for (const [id, type] of Object.entries(deployedLogicalIds.resources)) {
      expect([id, rootResources[id]?.Type]).toEqual([id, type]);
    }
    const routeIds = Object.entries(rootResources)
      .filter(([, resource]) => resource.Type === "AWS::ApiGatewayV2::Route")
      .map(([id]) => id);
    // Every route of the table, the widget's preflights and $default.
    expect(routeIds).toHaveLength(routes.length + widgetPaths.size + 1);
  });
});
