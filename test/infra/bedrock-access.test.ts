/**
 * What the message function may invoke on Bedrock, read from the synthesized template, for every
 * form of model id AWS documents: foundation models, every geographic inference-profile prefix,
 * global profiles, and full ARNs. The destination regions below are the ones the Bedrock user
 * guide lists for those profiles ("Supported Regions and models for inference profiles").
 */

import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TITAN_V2 } from "#functions/knowledge/models";
import { buildApp } from "#lib/app";
import { synthesize } from "./templates.ts";

const account = "123456789012";
const bundlingOff = { "aws:cdk:bundling-stacks": [] };

interface Statement {
  actions: string[];
  resources: string[];
  condition?: Record<string, Record<string, string>>;
}

/** `{"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, …]]}` as `arn:<AWS::Partition>…`. */
function text(value: unknown): string {
  if (typeof value === "string") return value;
  const join = (value as { "Fn::Join"?: [string, unknown[]] })["Fn::Join"];
  if (join) return join[1].map(text).join(join[0]);
  const ref = (value as { Ref?: string }).Ref;
  if (ref) return `<${ref}>`;
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}

/**
 * The message function's Bedrock statements in a stack deployed to `region` (as `cdk deploy`
 * sets it), or environment-agnostic for `null`.
 */
function bedrockStatements(bedrockModelIds: string, region: string | null): Statement[] {
  // The embedding model's grant is always there (its own test below); these tests are about the chat models.
  return allBedrockStatements(bedrockModelIds, region).filter(
    (statement) =>
      !statement.resources.every((resource) => resource.endsWith(`foundation-model/${TITAN_V2}`)),
  );
}

function allBedrockStatements(bedrockModelIds: string, region: string | null): Statement[] {
  if (region) {
    vi.stubEnv("CDK_DEFAULT_REGION", region);
    vi.stubEnv("CDK_DEFAULT_ACCOUNT", account);
  }
  const resources = synthesize({ ...bundlingOff, stage: "test", bedrockModelIds }).resources as Record<
    string,
    { Type: string; Properties: { PolicyDocument: { Statement: Record<string, unknown>[] } } }
  >;
  const policy = Object.entries(resources).find(
    ([id, resource]) => resource.Type === "AWS::IAM::Policy" && id.startsWith("SendMessageRole"),
  )?.[1];
  if (!policy) throw new Error("the message function has no policy");
  return policy.Properties.PolicyDocument.Statement.filter((statement) =>
    JSON.stringify(statement.Action).includes("bedrock:"),
  ).map((statement) => ({
    actions: [statement.Action].flat() as string[],
    resources: [statement.Resource].flat().map(text),
    ...(statement.Condition
      ? {
          condition: Object.fromEntries(
            Object.entries(statement.Condition as Record<string, Record<string, unknown>>).map(
              ([operator, keys]) => [
                operator,
                Object.fromEntries(Object.entries(keys).map(([key, value]) => [key, text(value)])),
              ],
            ),
          ),
        }
      : {}),
  }));
}

const invoke = ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"];
const foundationModel = (region: string, modelId: string) =>
  `arn:<AWS::Partition>:bedrock:${region}::foundation-model/${modelId}`;
const profile = (region: string, profileId: string) =>
  `arn:<AWS::Partition>:bedrock:${region}:${account}:inference-profile/${profileId}`;

/** IAM's resource matching: each ARN segment on its own, `*` for any run of characters. */
function grants(pattern: string, arn: string): boolean {
  const patternParts = pattern.split(":");
  const arnParts = arn.split(":");
  const head = (parts: string[]) => [...parts.slice(0, 5), parts.slice(5).join(":")];
  return head(patternParts).every((part, index) => {
    const glob = new RegExp(`^${part.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);
    return glob.test(head(arnParts)[index] ?? "");
  });
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("Bedrock grants of the message function", () => {
  it("always the embedding model retrieval uses (Titan Text Embeddings V2), in the stack's region", () => {
    expect(allBedrockStatements("", "eu-central-1")).toEqual([
      { actions: invoke, resources: [foundationModel("eu-central-1", TITAN_V2)] },
    ]);
  });

  it("a foundation-model id: that model in the stack's region, nothing else", () => {
    expect(bedrockStatements("anthropic.claude-3-5-haiku-20241022-v1:0", "eu-central-1")).toEqual([
      {
        actions: invoke,
        resources: [foundationModel("eu-central-1", "anthropic.claude-3-5-haiku-20241022-v1:0")],
      },
    ]);
  });

  it.each([
    ["us.", "us-east-1", ["us-east-1", "us-*"]],
    ["eu.", "eu-west-1", ["eu-west-1", "eu-*"]],
    ["apac.", "ap-southeast-1", ["ap-southeast-1", "ap-*"]],
    ["jp.", "ap-northeast-1", ["ap-northeast-1", "ap-northeast-3"]],
    ["au.", "ap-southeast-2", ["ap-southeast-2", "ap-southeast-4"]],
    ["ca.", "ca-central-1", ["ca-central-1", "ca-west-1"]],
    ["us-gov.", "us-gov-west-1", ["us-gov-west-1", "us-gov-east-1"]],
  ])(
    "a geographic %s profile: the profile here, the model only through it in every region it routes to",
    (prefix, region, modelRegions) => {
      const modelId = "anthropic.claude-sonnet-4-5-20250929-v1:0";
      const profileArn = profile(region, `${prefix}${modelId}`);
      expect(bedrockStatements(`${prefix}${modelId}`, region)).toEqual([
        { actions: invoke, resources: [profileArn] },
        {
          actions: invoke,
          resources: modelRegions.map((modelRegion) => foundationModel(modelRegion, modelId)),
          condition: { StringEquals: { "bedrock:InferenceProfileArn": profileArn } },
        },
      ]);
    },
  );

  // Source region → destination regions, as documented for each profile.
  it.each([
    [
      "us.anthropic.claude-haiku-4-5-20251001-v1:0",
      "ca-central-1",
      ["ca-central-1", "us-east-1", "us-east-2", "us-west-2"],
    ],
    ["us.amazon.nova-pro-v1:0", "us-west-1", ["us-east-1", "us-east-2", "us-west-1", "us-west-2"]],
    [
      "eu.anthropic.claude-sonnet-4-20250514-v1:0",
      "il-central-1",
      ["eu-central-1", "eu-north-1", "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-3", "il-central-1"],
    ],
    [
      "eu.anthropic.claude-haiku-4-5-20251001-v1:0",
      "eu-west-2",
      ["eu-central-1", "eu-north-1", "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3"],
    ],
    [
      "apac.anthropic.claude-sonnet-4-20250514-v1:0",
      "me-central-1",
      [
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-northeast-3",
        "ap-south-1",
        "ap-south-2",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "ap-southeast-4",
        "me-central-1",
      ],
    ],
    [
      "apac.amazon.nova-lite-v1:0",
      "ap-east-2",
      [
        "ap-east-2",
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-northeast-3",
        "ap-south-1",
        "ap-south-2",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "ap-southeast-4",
      ],
    ],
    ["jp.anthropic.claude-sonnet-4-5-20250929-v1:0", "ap-northeast-3", ["ap-northeast-1", "ap-northeast-3"]],
    ["au.anthropic.claude-haiku-4-5-20251001-v1:0", "ap-southeast-4", ["ap-southeast-2", "ap-southeast-4"]],
    ["ca.amazon.nova-lite-v1:0", "ca-west-1", ["ca-central-1", "ca-west-1"]],
    ["us-gov.anthropic.claude-sonnet-4-5-20250929-v1:0", "us-gov-east-1", ["us-gov-west-1"]],
  ])(
    "%s called from %s may reach the model in each documented destination",
    (profileId, source, destinations) => {
      const modelId = profileId.slice(profileId.indexOf(".") + 1);
      const statements = bedrockStatements(profileId, source);
      expect(statements.some((statement) => statement.resources.includes(profile(source, profileId)))).toBe(
        true,
      );
      for (const destination of destinations) {
        const target = foundationModel(destination, modelId);
        const granting = statements.filter((statement) =>
          statement.resources.some((pattern) => grants(pattern, target)),
        );
        expect([destination, granting.length]).toEqual([destination, 1]);
        expect(granting[0]?.condition).toEqual({
          StringEquals: { "bedrock:InferenceProfileArn": profile(source, profileId) },
        });
      }
    },
  );

  it("a global profile: the three documented parts, each model part only through the profile", () => {
    const modelId = "anthropic.claude-sonnet-4-5-20250929-v1:0";
    const profileArn = profile("us-east-1", `global.${modelId}`);
    expect(bedrockStatements(`global.${modelId}`, "us-east-1")).toEqual([
      {
        actions: invoke,
        resources: [profileArn],
        condition: { StringEquals: { "aws:RequestedRegion": "us-east-1" } },
      },
      {
        actions: invoke,
        resources: [foundationModel("us-east-1", modelId)],
        condition: {
          StringEquals: { "aws:RequestedRegion": "us-east-1", "bedrock:InferenceProfileArn": profileArn },
        },
      },
      {
        actions: invoke,
        resources: [foundationModel("", modelId)],
        condition: {
          StringEquals: { "aws:RequestedRegion": "unspecified", "bedrock:InferenceProfileArn": profileArn },
        },
      },
    ]);
  });

  it("full ARNs: exactly that resource, and an application profile's models only through it", () => {
    const appProfile = `arn:aws:bedrock:eu-west-1:${account}:application-inference-profile/a1b2c3d4e5f6`;
    const provisioned = `arn:aws:bedrock:eu-west-1:${account}:provisioned-model/abcdef123456`;
    const model = "arn:aws:bedrock:eu-west-1::foundation-model/amazon.nova-micro-v1:0";
    const systemProfile = `arn:aws:bedrock:eu-west-1:${account}:inference-profile/eu.amazon.nova-micro-v1:0`;
    expect(bedrockStatements([appProfile, provisioned, model, systemProfile].join(","), "eu-west-1")).toEqual(
      [
        { actions: invoke, resources: [appProfile] },
        {
          actions: invoke,
          resources: [foundationModel("*", "*"), foundationModel("", "*")],
          condition: { StringEquals: { "bedrock:InferenceProfileArn": appProfile } },
        },
        { actions: invoke, resources: [provisioned] },
        { actions: invoke, resources: [model] },
        { actions: invoke, resources: [systemProfile] },
        {
          actions: invoke,
          resources: [
            "arn:aws:bedrock:eu-west-1::foundation-model/amazon.nova-micro-v1:0",
            "arn:aws:bedrock:eu-*::foundation-model/amazon.nova-micro-v1:0",
          ],
          condition: { StringEquals: { "bedrock:InferenceProfileArn": systemProfile } },
        },
      ],
    );
  });

  it("keeps the region a token in an environment-agnostic synth", () => {
    const [profileStatement] = bedrockStatements("apac.amazon.nova-pro-v1:0", null);
    expect(profileStatement?.resources).toEqual([
      "arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/apac.amazon.nova-pro-v1:0",
    ]);
  });

  it.each([
    [
      "xx.anthropic.claude-3-haiku-20240307-v1:0",
      /unknown inference-profile prefix "xx" \(known: us, eu, apac, jp, au, ca, us-gov, global\)/,
    ],
    ["anthropic claude", /"anthropic claude" is not a Bedrock model id/],
    ["global.", /"global\." is not a Bedrock model id|after the profile prefix is not a Bedrock model id/],
    ["arn:aws:s3:::bucket/key", /is not a Bedrock ARN/],
    [`arn:aws:bedrock:eu-west-1:${account}:guardrail/abc`, /is not a Bedrock ARN/],
    ["arn:aws:bedrock:eu-west-1:123456789012:foundation-model/amazon.nova-micro-v1:0", /has an account/],
    ["arn:aws:bedrock:eu-west-1::provisioned-model/abc", /has no account/],
  ])("refuses %s at synth", (modelId, message) => {
    expect(() => buildApp({ ...bundlingOff, stage: "test", bedrockModelIds: modelId })).toThrow(message);
  });

  it("refuses an ARN in another region than the functions call Bedrock in", () => {
    expect(() =>
      bedrockStatements(`arn:aws:bedrock:us-east-1:${account}:provisioned-model/abc`, "eu-west-1"),
    ).toThrow(/is in us-east-1, but the functions call Bedrock in eu-west-1/);
  });
});

describe("cdk-nag", () => {
  const everyForm = [
    "amazon.nova-micro-v1:0",
    "us.anthropic.claude-3-5-haiku-20241022-v1:0",
    "eu.anthropic.claude-3-7-sonnet-20250219-v1:0",
    "apac.amazon.nova-lite-v1:0",
    "jp.anthropic.claude-haiku-4-5-20251001-v1:0",
    "au.anthropic.claude-haiku-4-5-20251001-v1:0",
    "ca.amazon.nova-lite-v1:0",
    "us-gov.anthropic.claude-3-7-sonnet-20250219-v1:0",
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
    `arn:aws:bedrock:eu-west-1:${account}:application-inference-profile/a1b2c3d4e5f6`,
  ].join(",");

  it("passes with every form, environment-agnostic and with the account and region `cdk deploy` sets", () => {
    const agnostic = buildApp({ ...bundlingOff, stage: "test", bedrockModelIds: everyForm });
    expect(() => agnostic.app.synth()).not.toThrow();
    vi.stubEnv("CDK_DEFAULT_REGION", "eu-west-1");
    vi.stubEnv("CDK_DEFAULT_ACCOUNT", account);
    // In a region, only the profiles that can be called from it (the others stop synth).
    const inEuWest1 = everyForm
      .split(",")
      .filter((id) => !/^(us|apac|jp|au|ca|us-gov)\./.test(id))
      .join(",");
    const deployed = buildApp({ ...bundlingOff, stage: "test", bedrockModelIds: inEuWest1 });
    expect(() => deployed.app.synth()).not.toThrow();
  });

  it("still fails for a Bedrock wildcard nobody acknowledged", () => {
    const { app, stack } = buildApp({ ...bundlingOff, stage: "test", bedrockModelIds: everyForm });
    stack.functions.get("SendMessage")?.addToRolePolicy(
      new PolicyStatement({
        actions: ["bedrock:InvokeModel"],
        resources: ["arn:aws:bedrock:*::foundation-model/*"],
      }),
    );
    expect(() => app.synth()).toThrow(
      /AwsSolutions-IAM5\[Resource::arn:aws:bedrock:\*::foundation-model\/\*\]/,
    );
  });
});
