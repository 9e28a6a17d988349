/**
 * The stage's operations in its templates (docs/operations.md): the alarms and where they go, the
 * dashboard, tracing, log masking and retention, dead-letter queues, shared-capacity guards, and the
 * deploy-time guards on models and on Cognito.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { generateApiKey } from "#functions/domain/api-keys";
import { buildApp } from "#lib/app";
import { allQueues, eventFunctions, queues } from "#lib/event-sources";
import { customSecretPatterns } from "#lib/log-protection";
import { allFunctions } from "#lib/routes";
import { type Resources, synthesize } from "./templates.ts";

const context = { "aws:cdk:bundling-stacks": [], stage: "test", bedrockModelIds: "anthropic.claude-test-v1" };

let synthesized: ReturnType<typeof synthesize>;
let resources: Resources;
const ofType = (type: string, from: Resources = resources) =>
  Object.entries(from).filter(([, resource]) => resource.Type === type);

beforeAll(() => {
  synthesized = synthesize({ ...context, alarmEmail: "ops@example.com" });
  resources = synthesized.resources;
});
afterEach(() => vi.unstubAllEnvs());

describe("alarms", () => {
  it("all notify the one alarm topic, on ALARM and on OK; the e-mail from context subscribes to it", () => {
    const topics = ofType("AWS::SNS::Topic");
    expect(topics).toHaveLength(1);
    const [topicId] = topics[0] ?? [];
    const alarms = ofType("AWS::CloudWatch::Alarm");
    for (const [id, alarm] of alarms) {
      const actions = JSON.stringify([alarm.Properties.AlarmActions, alarm.Properties.OKActions]);
      expect([id, actions.match(new RegExp(`${topicId}`, "g"))?.length]).toEqual([id, 2]);
    }
    synthesized.root.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: "ops@example.com",
    });
    expect(ofType("AWS::SNS::Subscription", synthesize(context).resources)).toHaveLength(0);
  });

  it("watch every function's errors and throttles, beside the function", () => {
    const alarms = ofType("AWS::CloudWatch::Alarm");
    for (const definition of [...allFunctions, ...eventFunctions]) {
      for (const metric of ["Errors", "Throttles"]) {
        const found = alarms.filter(
          ([id, alarm]) =>
            id.startsWith(`${definition.id}${metric}Alarm`) && alarm.Properties.MetricName === metric,
        );
        expect([definition.id, metric, found.length]).toEqual([definition.id, metric, 1]);
        const [id] = found[0] ?? [];
        const fnId = Object.keys(resources).find((key) =>
          new RegExp(`^${definition.id}[0-9A-F]{8}$`).test(key),
        );
        expect(synthesized.stackOf[id ?? ""]).toBe(synthesized.stackOf[fnId ?? ""]);
      }
    }
  });

  it("watch what the issue names: fallback rate, 5xx and p99 per API, authorizer failures, every failure queue, the fan-out, the table, account concurrency", () => {
    const monitoring = synthesized.nested.get("Monitoring");
    if (!monitoring) throw new Error("no Monitoring stack");
    const ids = Object.keys(monitoring.toJSON().Resources).filter(
      (id) => monitoring.toJSON().Resources[id].Type === "AWS::CloudWatch::Alarm",
    );
    const failureQueues = [
      queues.webhookDeliveriesDeadLetters.id,
      queues.conversationTimersDeadLetters.id,
      queues.eventFanoutFailures.id,
    ];
    for (const name of [
      "FallbackRate",
      "ApiServerErrorRate",
      "ApiLatencyP99",
      "StreamServerErrorRate",
      "StreamLatencyP99",
      "AuthorizerFailures",
      "FanoutIteratorAge",
      "TableThrottles",
      "TableSystemErrors",
      "AccountConcurrency",
      ...failureQueues.map((queue) => `${queue}Depth`),
    ]) {
      expect([name, ids.filter((id) => id.startsWith(name)).length]).toEqual([name, 1]);
    }
    monitoring.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: "IF(turns >= 10, 100 * fallbacks / turns, 0)" }),
        Match.objectLike({
          Id: "fallbacks",
          MetricStat: Match.objectLike({
            Metric: {
              Namespace: "ChatbotApi",
              MetricName: "Fallbacks",
              Dimensions: [{ Name: "Stage", Value: "test" }],
            },
          }),
        }),
      ]),
    });
    monitoring.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ConcurrentExecutions",
      Namespace: "AWS/Lambda",
      Threshold: 800,
    });
  });

  it("each has its row in the runbook's Alarms table (what it means, what to do), which its description names", () => {
    const doc = readFileSync(resolve(import.meta.dirname, "../../docs/operations.md"), "utf8");
    const start = doc.indexOf("\n## Alarms\n");
    const section = doc.slice(start, doc.indexOf("\n## ", start + 1));
    /** The alarm names each row's first cell lists (`Name` (stack)). */
    const rows = [...section.matchAll(/^\| (.+?) \|/gm)].flatMap((row) =>
      [...(row[1] ?? "").matchAll(/`([^`]+)`/g)].map((name) => name[1]),
    );
    for (const [id, alarm] of ofType("AWS::CloudWatch::Alarm")) {
      const own = /^.+?(Errors|Throttles)Alarm[0-9A-F]{8}$/.exec(id);
      // A function's alarms share one row each; the others have their own, by construct id.
      const name = own
        ? `<Function>${own[1]}Alarm`
        : id.replace(/(\/)?[0-9A-F]{8}$/, "").replace(/^.*\//, "");
      expect([id, rows.includes(name)], `add a row for ${name} to docs/operations.md, Alarms`).toEqual([
        id,
        true,
      ]);
      expect(String(alarm.Properties.AlarmDescription)).toContain(`(docs/operations.md, Alarms, "${name}")`);
    }
  });

  it("come with one dashboard", () => {
    expect(ofType("AWS::CloudWatch::Dashboard")).toHaveLength(1);
    synthesized.root.hasOutput("DashboardName", {});
    synthesized.root.hasOutput("AlarmTopicArn", {});
  });
});

describe("logs and traces", () => {
  it("every log group masks e-mail addresses, phone numbers, keys and our secrets", () => {
    const groups = ofType("AWS::Logs::LogGroup");
    // Every function's, the HTTP API's access log, the console deployment function's.
    expect(groups.length).toBe(allFunctions.length + eventFunctions.length + 2);
    for (const [id, group] of groups) {
      const policy = JSON.stringify(group.Properties.DataProtectionPolicy);
      for (const identifier of [
        "EmailAddress",
        "PhoneNumber-US",
        "PhoneNumber-GB",
        "AwsSecretKey",
        "PkcsPrivateKey",
        "ApiKey",
        "WebhookSecret",
        "BearerToken",
      ]) {
        expect([id, policy.includes(identifier)]).toEqual([id, true]);
      }
      expect(policy).toContain('"Deidentify":{"MaskConfig":{}}');
    }
  });

  it("the masking patterns match the service's own secrets", () => {
    const key = generateApiKey();
    expect(new RegExp(customSecretPatterns.ApiKey).exec(`key=${key} `)?.[0]).toBe(key);
    const secret = `whsec_${Buffer.from("0123456789abcdefghijklmnopqrstuv").toString("base64")}`;
    expect(new RegExp(customSecretPatterns.WebhookSecret).exec(secret)?.[0]).toBe(secret);
    const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhYmMiLCJleHAiOjF9.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
    expect(new RegExp(customSecretPatterns.BearerToken).exec(`Bearer ${jwt}`)?.[0]).toBe(jwt);
  });

  it("log groups are kept with a prod stage and deleted with a test stage", () => {
    for (const [, group] of ofType("AWS::Logs::LogGroup")) expect(group.DeletionPolicy).toBe("Delete");
    const prod = synthesize({ ...context, stage: "prod" }).resources;
    for (const [, group] of ofType("AWS::Logs::LogGroup", prod)) expect(group.DeletionPolicy).toBe("Retain");
  });

  it("in a prod stage every function, CDK's own included, logs into one of these groups", () => {
    // (A test stage adds CDK's auto-delete function for its buckets, whose group Lambda creates.)
    const prod = synthesize({ ...context, stage: "prod" }).resources;
    const functions = ofType("AWS::Lambda::Function", prod);
    expect(functions.length).toBe(allFunctions.length + eventFunctions.length + 1);
    for (const [id, fn] of functions) {
      const target = (fn.Properties.LoggingConfig as { LogGroup?: { Ref?: string } } | undefined)?.LogGroup
        ?.Ref;
      expect([id, prod[target ?? ""]?.Type]).toEqual([id, "AWS::Logs::LogGroup"]);
    }
  });

  it("tracing is off by default and on for every function with -c tracing=true", () => {
    for (const [id, fn] of ofType("AWS::Lambda::Function")) {
      expect([id, (fn.Properties.TracingConfig as { Mode?: string } | undefined)?.Mode]).not.toEqual([
        id,
        "Active",
      ]);
    }
    const traced = synthesize({ ...context, tracing: "true" }).resources;
    const ours = ofType("AWS::Lambda::Function", traced).filter(([id]) =>
      [...allFunctions, ...eventFunctions].some((definition) =>
        new RegExp(`^${definition.id}[0-9A-F]{8}$`).test(id),
      ),
    );
    expect(ours).toHaveLength(allFunctions.length + eventFunctions.length);
    for (const [, fn] of ours) expect(fn.Properties.TracingConfig).toEqual({ Mode: "Active" });
  });
});

describe("queues", () => {
  it("every dead-letter and on-failure queue, in whichever stack, has its depth alarm", () => {
    /** A queue's construct id from its logical id (`<id><8 hex>`, as CDK names it). */
    const constructId = (logicalId: unknown) => String(logicalId).replace(/[0-9A-F]{8}$/, "");
    const targetOf = (arn: unknown) => (arn as { "Fn::GetAtt"?: [string, string] })?.["Fn::GetAtt"]?.[0];
    const deadLetters = ofType("AWS::SQS::Queue").flatMap(([, queue]) => {
      const policy = queue.Properties.RedrivePolicy as { deadLetterTargetArn?: unknown } | undefined;
      return policy ? [targetOf(policy.deadLetterTargetArn)] : [];
    });
    const onFailure = ofType("AWS::Lambda::EventSourceMapping").flatMap(([, mapping]) => {
      const config = mapping.Properties.DestinationConfig as
        | { OnFailure?: { Destination?: unknown } }
        | undefined;
      return config?.OnFailure ? [targetOf(config.OnFailure.Destination)] : [];
    });
    const failureQueues = [...new Set([...deadLetters, ...onFailure].map(constructId))].sort();
    expect(failureQueues).toEqual(
      expect.arrayContaining([
        queues.webhookDeliveriesDeadLetters.id,
        queues.conversationTimersDeadLetters.id,
        queues.eventFanoutFailures.id,
      ]),
    );
    const depthAlarms = ofType("AWS::CloudWatch::Alarm")
      .filter(([, alarm]) => alarm.Properties.MetricName === "ApproximateNumberOfMessagesVisible")
      .map(([id]) => id.replace(/Depth[0-9A-F]{8}$/, ""))
      .sort();
    expect(depthAlarms).toEqual(failureQueues);
  });

  it("each queue that dead-letters has a dead-letter queue of its own", () => {
    const targets = allQueues.flatMap((queue) => (queue.deadLetter ? [queue.deadLetter.queueId] : []));
    expect(new Set(targets).size).toBe(targets.length);
    expect(queues.conversationTimers.deadLetter.queueId).toBe(queues.conversationTimersDeadLetters.id);
    synthesized.root.hasResourceProperties("AWS::SQS::Queue", {
      RedrivePolicy: {
        deadLetterTargetArn: {
          "Fn::GetAtt": [Match.stringLikeRegexp(`^${queues.conversationTimersDeadLetters.id}`), "Arn"],
        },
        maxReceiveCount: 5,
      },
    });
  });
});

describe("shared capacity", () => {
  const reserved = (from: Resources, id: string) =>
    ofType("AWS::Lambda::Function", from).find(([key]) => new RegExp(`^${id}[0-9A-F]{8}$`).test(key))?.[1]
      .Properties.ReservedConcurrentExecutions;

  it("reserves concurrency for both authorizers and caps the stream function; the others share the pool", () => {
    expect(reserved(resources, "Authorizer")).toBe(50);
    expect(reserved(resources, "ManageAuthorizer")).toBe(50);
    expect(reserved(resources, "StreamMessage")).toBe(100);
    expect(reserved(resources, "SendMessage")).toBeUndefined();
    const tuned = synthesize({
      ...context,
      authorizerReservedConcurrency: "20",
      streamReservedConcurrency: "0",
    });
    expect(reserved(tuned.resources, "Authorizer")).toBe(20);
    expect(reserved(tuned.resources, "StreamMessage")).toBeUndefined();
  });

  it("throttles the stage by default", () => {
    synthesized.root.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      DefaultRouteSettings: { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
    });
  });

  it("puts a rate-based web ACL on the console's distribution with -c waf=true, in us-east-1 only", () => {
    expect(ofType("AWS::WAFv2::WebACL")).toHaveLength(0);
    const withWaf = synthesize({ ...context, waf: "true", wafRateLimit: "500" });
    const console = withWaf.nested.get("Console");
    console?.hasResourceProperties("AWS::WAFv2::WebACL", {
      Scope: "CLOUDFRONT",
      Rules: [
        Match.objectLike({
          Action: { Block: {} },
          Statement: { RateBasedStatement: { Limit: 500, AggregateKeyType: "IP" } },
        }),
      ],
    });
    console?.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: Match.objectLike({
        WebACLId: { "Fn::GetAtt": [Match.stringLikeRegexp("^WebAcl"), "Arn"] },
      }),
    });
    expect(() => withWaf.app.synth()).not.toThrow();
    vi.stubEnv("CDK_DEFAULT_REGION", "eu-west-1");
    vi.stubEnv("CDK_DEFAULT_ACCOUNT", "123456789012");
    expect(() => buildApp({ ...context, waf: "true" })).toThrow(
      /CloudFront web ACL can only be created in us-east-1/,
    );
  });
});

describe("deploy-time guards", () => {
  it("refuse a geographic inference profile that cannot be called from the stack's region, saying why", () => {
    vi.stubEnv("CDK_DEFAULT_REGION", "us-east-1");
    vi.stubEnv("CDK_DEFAULT_ACCOUNT", "123456789012");
    expect(() =>
      buildApp({ ...context, bedrockModelIds: "eu.anthropic.claude-3-7-sonnet-20250219-v1:0" }),
    ).toThrow(
      /eu\.anthropic\.claude-3-7-sonnet-20250219-v1:0 is a cross-region inference profile of the eu\. geography, which cannot be called from us-east-1 .*use the us\. profile/,
    );
    expect(() =>
      buildApp({ ...context, bedrockModelIds: "us.anthropic.claude-3-7-sonnet-20250219-v1:0" }),
    ).not.toThrow();
    vi.stubEnv("CDK_DEFAULT_REGION", "il-central-1");
    expect(() =>
      buildApp({ ...context, bedrockModelIds: "eu.anthropic.claude-sonnet-4-20250514-v1:0" }),
    ).not.toThrow();
  });

  it("give the model functions the aws-marketplace actions for a third-party model, not for Amazon's own", () => {
    const marketplace = (from: Resources) =>
      ofType("AWS::IAM::Policy", from)
        .filter(([, policy]) => JSON.stringify(policy.Properties).includes("aws-marketplace:"))
        .map(([id]) => id.replace(/RoleDefaultPolicy.*$/, ""))
        .sort();
    // Every function that may invoke the configured models (the turn's and knowledge search's).
    const modelFunctions = [...allFunctions, ...eventFunctions]
      .filter((definition) => definition.grants?.includes("bedrock:invoke-configured-models"))
      .map((definition) => definition.id)
      .sort();
    expect(modelFunctions).toEqual(expect.arrayContaining(["SendMessage", "StreamMessage"]));
    expect(marketplace(resources)).toEqual(modelFunctions);
    const statement = ofType("AWS::IAM::Policy")
      .flatMap(
        ([, policy]) =>
          (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
      )
      .find((candidate) => JSON.stringify(candidate.Action).includes("aws-marketplace:"));
    expect(([statement?.Action].flat() as string[]).sort()).toEqual([
      "aws-marketplace:Subscribe",
      "aws-marketplace:Unsubscribe",
      "aws-marketplace:ViewSubscriptions",
    ]);
    expect(
      marketplace(synthesize({ ...context, bedrockModelIds: "amazon.nova-micro-v1:0" }).resources),
    ).toEqual([]);
  });

  it("warn at synth when no model is granted", () => {
    const { stack } = buildApp({ "aws:cdk:bundling-stacks": [], stage: "test" });
    Annotations.fromStack(stack).hasWarning("*", Match.stringLikeRegexp("No Bedrock model is granted"));
    const granted = buildApp(context).stack;
    expect(
      Annotations.fromStack(granted).findWarning("*", Match.stringLikeRegexp("No Bedrock model")),
    ).toEqual([]);
  });

  it("keep the console client's OAuth off, and send Cognito's mail through SES when a sender is given", () => {
    synthesized.root.hasResourceProperties("AWS::Cognito::UserPoolClient", {
      AllowedOAuthFlows: Match.absent(),
      CallbackURLs: Match.absent(),
      AllowedOAuthFlowsUserPoolClient: false,
    });
    synthesized.root.hasResourceProperties("AWS::Cognito::UserPool", {
      EmailConfiguration: { EmailSendingAccount: "COGNITO_DEFAULT" },
      MfaConfiguration: "OFF",
    });
    vi.stubEnv("CDK_DEFAULT_REGION", "eu-west-1");
    vi.stubEnv("CDK_DEFAULT_ACCOUNT", "123456789012");
    const ses = Template.fromStack(
      buildApp({ ...context, sesFromAddress: "no-reply@shop.example", consoleMfa: "optional" }).stack,
    );
    ses.hasResourceProperties("AWS::Cognito::UserPool", {
      EmailConfiguration: Match.objectLike({
        EmailSendingAccount: "DEVELOPER",
        From: "no-reply@shop.example",
      }),
      MfaConfiguration: "OPTIONAL",
      EnabledMfas: ["SOFTWARE_TOKEN_MFA"],
    });
    expect(() => buildApp({ ...context, consoleMfa: "required" })).toThrow(
      /consoleMfa: required would lock every person out of the console/,
    );
    const pool = Object.values(ses.toJSON().Resources as Resources).find(
      (resource) => resource.Type === "AWS::Cognito::UserPool",
    );
    expect(JSON.stringify(pool?.Properties.EmailConfiguration)).toMatch(
      /:ses:eu-west-1:123456789012:identity\/shop\.example/,
    );
  });
});
