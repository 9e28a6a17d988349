/**
 * Stage configuration from CDK context. `cdk synth -c name=value` hands every value over as a
 * string; cdk.json hands over JSON values. Both must mean the same stack, and a bad value must
 * stop synth with a message that names the setting.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Match, Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { buildApp } from "#lib/app";
import { parseStageConfig } from "#lib/stage-config";

const base = { "aws:cdk:bundling-stacks": [], stage: "test" };
const root = resolve(import.meta.dirname, "../..");

type Resources = Record<
  string,
  { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string }
>;

/** What the numeric and boolean settings became in a template. */
function applied(resources: Resources) {
  const of = (type: string) => Object.values(resources).filter((resource) => resource.Type === type);
  const stage = of("AWS::ApiGatewayV2::Stage")[0]?.Properties.DefaultRouteSettings as
    | { ThrottlingRateLimit?: number; ThrottlingBurstLimit?: number }
    | undefined;
  return {
    retentions: [...new Set(of("AWS::Logs::LogGroup").map((group) => group.Properties.RetentionInDays))],
    tableDeletionPolicy: of("AWS::DynamoDB::Table")[0]?.DeletionPolicy,
    throttle: stage ? { rate: stage.ThrottlingRateLimit, burst: stage.ThrottlingBurstLimit } : undefined,
  };
}

const synthesize = (context: Record<string, unknown>) =>
  applied(Template.fromStack(buildApp({ ...base, ...context }).stack).toJSON().Resources as Resources);

describe("numeric and boolean settings", () => {
  const expected = {
    retentions: [14],
    tableDeletionPolicy: "Retain",
    throttle: { rate: 50, burst: 100 },
  };

  it("work as the strings `cdk synth -c name=value` passes", () => {
    expect(
      synthesize({
        retainData: "true",
        logRetentionDays: "14",
        throttleRateLimit: "50",
        throttleBurstLimit: "100",
      }),
    ).toEqual(expected);
    expect(synthesize({ retainData: "false" }).tableDeletionPolicy).toBe("Delete");
    expect(synthesize({ throttleRateLimit: "0.5", throttleBurstLimit: "1" }).throttle).toEqual({
      rate: 0.5,
      burst: 1,
    });
  });

  it("work as the JSON values cdk.json holds", () => {
    expect(
      synthesize({ retainData: true, logRetentionDays: 14, throttleRateLimit: 50, throttleBurstLimit: 100 }),
    ).toEqual(expected);
    expect(synthesize({ retainData: false }).tableDeletionPolicy).toBe("Delete");
  });

  it("keep their defaults when not given", () => {
    expect(synthesize({})).toEqual({
      retentions: [30],
      tableDeletionPolicy: "Delete",
      throttle: { rate: 1000, burst: 2000 },
    });
    expect(synthesize({ stage: "prod" }).tableDeletionPolicy).toBe("Retain");
  });

  it.each([
    ["retainData", "yes", /retainData: must be true or false \(got "yes"\)/],
    ["retainData", 1, /retainData: must be true or false \(got 1\)/],
    ["logRetentionDays", "fourteen", /logRetentionDays: must be a whole number of days \(got "fourteen"\)/],
    ["logRetentionDays", "14.5", /logRetentionDays: must be a whole number of days/],
    ["logRetentionDays", "13", /logRetentionDays: must be one of CloudWatch's retention periods: 1, 3, 5, 7/],
    ["logRetentionDays", 0, /logRetentionDays: must be one of CloudWatch's retention periods/],
    ["throttleRateLimit", "fast", /throttleRateLimit: must be a number of requests per second above 0/],
    ["throttleRateLimit", "-5", /throttleRateLimit: must be a number of requests per second above 0/],
    ["throttleBurstLimit", "1.5", /throttleBurstLimit: must be a whole number of requests, 1 or more/],
    ["throttleBurstLimit", "", /throttleBurstLimit: must be a whole number of requests, 1 or more/],
  ])("refuses %s = %j at synth, naming the setting", (key, value, message) => {
    const other = key === "throttleRateLimit" ? { throttleBurstLimit: 10 } : { throttleRateLimit: 10 };
    const context = key.startsWith("throttle") ? { ...other, [key]: value } : { [key]: value };
    expect(() => buildApp({ ...base, ...context })).toThrow(message);
  });

  it("refuses one throttle setting without the other", () => {
    expect(() => buildApp({ ...base, throttleRateLimit: "50" })).toThrow(
      /throttleRateLimit and throttleBurstLimit go together/,
    );
    expect(() => buildApp({ ...base, throttleBurstLimit: 100 })).toThrow(
      /throttleRateLimit and throttleBurstLimit go together/,
    );
  });
});

describe("who sets model servers", () => {
  it("lets admins choose them unless the operator forbids it, and refuses any other value by name", () => {
    expect(parseStageConfig({}).customModelServers).toBe("allowed");
    expect(parseStageConfig({ customModelServers: "forbidden" }).customModelServers).toBe("forbidden");
    expect(() => parseStageConfig({ customModelServers: "no" })).toThrow(/customModelServers/);
  });
});

describe("the real cdk CLI", () => {
  it("synthesizes with every numeric and boolean setting given as -c on the command line", () => {
    const out = mkdtempSync(join(tmpdir(), "chatbot-api-synth-"));
    try {
      const result = spawnSync(
        resolve(root, "node_modules/.bin/cdk"),
        [
          "synth",
          "--quiet",
          "--no-notices",
          "--output",
          out,
          "-c",
          "stage=clitest",
          "-c",
          "retainData=true",
          "-c",
          "logRetentionDays=14",
          "-c",
          "throttleRateLimit=50",
          "-c",
          "throttleBurstLimit=100",
          "-c",
          // The CLI synthesizes for us-east-1 here (no AWS configuration): a us. profile.
          "bedrockModelIds=us.anthropic.claude-3-7-sonnet-20250219-v1:0,amazon.nova-micro-v1:0",
        ],
        {
          cwd: root,
          encoding: "utf8",
          timeout: 110_000,
          // The CLI runs the app with whatever `node` comes first; the project's own Node 24 does.
          env: {
            ...process.env,
            PATH: `${resolve(root, "node_modules/.bin")}:${process.env.PATH ?? ""}`,
            CDK_DISABLE_CLI_TELEMETRY: "true",
          },
        },
      );
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      const template = JSON.parse(readFileSync(join(out, "ChatbotApi-clitest.template.json"), "utf8")) as {
        Resources: Resources;
      };
      expect(applied(template.Resources)).toEqual({
        retentions: [14],
        tableDeletionPolicy: "Retain",
        throttle: { rate: 50, burst: 100 },
      });
      Template.fromJSON(template).hasResourceProperties("AWS::DynamoDB::Table", {
        DeletionProtectionEnabled: true,
        BillingMode: Match.anyValue(),
      });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
