/**
 * What the message function may invoke on Bedrock, from the operator's `bedrockModelIds`: the
 * IAM statements each kind of model id needs, as AWS's Bedrock user guide describes them.
 *
 * - A foundation-model id (`anthropic.claude-…`): that model in the stack's region.
 * - A geographic cross-region inference profile (`us.`, `eu.`, `apac.`, `jp.`, `au.`, `ca.`,
 *   `us-gov.` + model id): the profile in the stack's region, and the model in every region the
 *   profile may route to (the calling region and the geography's regions), usable only through
 *   that profile (condition `bedrock:InferenceProfileArn`).
 * - A global profile (`global.` + model id): the documented three parts: the profile in this
 *   region, the model in this region, and the region-less global model ARN (evaluated with
 *   `aws:RequestedRegion` = `unspecified`), each model part only through that profile.
 * - A full ARN: exactly that resource; an inference-profile ARN as its id above, and an
 *   application inference profile with the models behind it, only through that profile.
 *
 * Both invoke actions are granted: Converse authorizes as InvokeModel, ConverseStream as
 * InvokeModelWithResponseStream. Anything else (an unknown profile prefix, a malformed id) is
 * refused at synth, since a grant on a resource that does not exist would make every turn fail.
 */
import { PolicyStatement } from "aws-cdk-lib/aws-iam";

/** Documented geographic prefixes and the regions their profiles route to, besides the caller's own. */
const geographies = {
  // Large geographies keep gaining regions in newer profiles: match them by name.
  us: ["us-*"],
  eu: ["eu-*"],
  apac: ["ap-*"],
  // Small ones are a fixed, documented set.
  jp: ["ap-northeast-1", "ap-northeast-3"],
  au: ["ap-southeast-2", "ap-southeast-4"],
  ca: ["ca-central-1", "ca-west-1"],
  "us-gov": ["us-gov-east-1", "us-gov-west-1"],
} as const satisfies Record<string, readonly string[]>;

type Geography = keyof typeof geographies;
const isGeography = (prefix: string): prefix is Geography => Object.hasOwn(geographies, prefix);
export const inferenceProfilePrefixes = [...Object.keys(geographies), "global"];

/** Resource types a full Bedrock ARN may name here. */
const arnResourceTypes = [
  "foundation-model",
  "inference-profile",
  "application-inference-profile",
  "provisioned-model",
  "imported-model",
  "custom-model-deployment",
] as const;
type ArnResourceType = (typeof arnResourceTypes)[number];

/** Where a resource lives; values may be CloudFormation tokens. */
export interface BedrockPlace {
  partition: string;
  region: string;
  account: string;
}

export type BedrockModel =
  | { kind: "foundation-model"; modelId: string }
  | {
      kind: "geographic-profile";
      profileId: string;
      geography: Geography;
      modelId: string;
      /** Given as a full ARN: the profile's own place rather than the stack's. */
      at?: BedrockPlace;
    }
  | { kind: "global-profile"; profileId: string; modelId: string; at?: BedrockPlace }
  | { kind: "arn"; arn: string; region: string; resourceType: ArnResourceType };

const foundationModelId = /^[a-z0-9-]+\.[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const bedrockArn =
  /^arn:(aws[a-z-]*):bedrock:([a-z0-9-]+):(\d{12})?:([a-z-]+)\/([A-Za-z0-9][A-Za-z0-9._:-]*)$/;

export function parseBedrockModel(id: string): BedrockModel | { problem: string } {
  if (id.startsWith("arn:")) {
    const match = bedrockArn.exec(id);
    const [, partition = "", region = "", account = "", resourceType = "", resourceId = ""] = match ?? [];
    if (!match || !(arnResourceTypes as readonly string[]).includes(resourceType)) {
      return {
        problem: `"${id}" is not a Bedrock ARN of a ${arnResourceTypes.join(", ")}`,
      };
    }
    const type = resourceType as ArnResourceType;
    if ((type === "foundation-model") !== (account === "")) {
      return {
        problem: `"${id}" has ${account ? "an" : "no"} account, which a ${type} ARN ${account ? "never has" : "needs"}`,
      };
    }
    if (type === "inference-profile") {
      const profile = parseBedrockModel(resourceId);
      if ("problem" in profile) return profile;
      if (profile.kind !== "geographic-profile" && profile.kind !== "global-profile") {
        return { problem: `"${id}" names no cross-region inference profile` };
      }
      return { ...profile, at: { partition, region, account } };
    }
    return { kind: "arn", arn: id, region, resourceType: type };
  }
  const dot = id.indexOf(".");
  const prefix = id.slice(0, dot);
  const rest = id.slice(dot + 1);
  if (dot > 0 && (isGeography(prefix) || prefix === "global")) {
    if (!foundationModelId.test(rest)) {
      return { problem: `"${id}": "${rest}" after the profile prefix is not a Bedrock model id` };
    }
    return isGeography(prefix)
      ? { kind: "geographic-profile", profileId: id, geography: prefix, modelId: rest }
      : { kind: "global-profile", profileId: id, modelId: rest };
  }
  if (!foundationModelId.test(id)) {
    return { problem: `"${id}" is not a Bedrock model id, inference-profile id or ARN` };
  }
  // Model ids are `provider.model`; a further dot before the version means a profile prefix we
  // do not know, whose grant would name a model that does not exist.
  if (rest.split(":")[0]?.includes(".")) {
    return {
      problem: `"${id}" starts with an unknown inference-profile prefix "${prefix}" (known: ${inferenceProfilePrefixes.join(", ")}); give its full ARN instead`,
    };
  }
  return { kind: "foundation-model", modelId: id };
}

/**
 * The regions a geographic profile can be called from (its source regions, as the Bedrock user
 * guide's "Supported Regions and models for inference profiles" lists them): a profile of another
 * geography does not exist in the stack's region, and every turn would fall back.
 */
const sourceRegions: Record<Geography, RegExp> = {
  us: /^(us-(east|west)-\d|ca-central-1)$/,
  eu: /^(eu-[a-z]+-\d|il-central-1)$/,
  apac: /^(ap-[a-z]+-\d|me-central-1)$/,
  jp: /^ap-northeast-[13]$/,
  au: /^ap-southeast-[24]$/,
  ca: /^ca-(central|west)-1$/,
  "us-gov": /^us-gov-(east|west)-1$/,
};

/** Why `model` cannot be called from `region` (a profile of another geography), if it cannot. */
export function regionProblem(model: BedrockModel, region: string): string | undefined {
  if (model.kind !== "geographic-profile" || model.at) return undefined;
  if (sourceRegions[model.geography].test(region)) return undefined;
  return `${model.profileId} is a cross-region inference profile of the ${model.geography}. geography, which cannot be called from ${region} (the stack's region, where the functions call Bedrock): every turn would fall back. Deploy to a region of that geography, or use the ${geographyFor(region) ?? "global"}. profile or the model id in ${region}`;
}

function geographyFor(region: string): string | undefined {
  return (Object.keys(sourceRegions) as Geography[]).find((geography) =>
    sourceRegions[geography].test(region),
  );
}

/**
 * Whether the model is sold through AWS Marketplace (any provider but Amazon): its first call in an
 * account subscribes to it, which needs the aws-marketplace permissions AWS documents.
 */
export function isThirdPartyModel(model: BedrockModel): boolean {
  const modelId =
    model.kind === "arn" ? (model.arn.split("/").pop() ?? "") : "modelId" in model ? model.modelId : "";
  if (model.kind === "arn" && model.resourceType !== "foundation-model") return true;
  return !modelId.startsWith("amazon.");
}

/** The region a model given as a full ARN lives in (Bedrock is called in the stack's region). */
export function regionOf(model: BedrockModel): string | undefined {
  if (model.kind === "arn") return model.region;
  return "at" in model ? model.at?.region : undefined;
}

export function bedrockModelProblem(id: string): string | undefined {
  const parsed = parseBedrockModel(id);
  return "problem" in parsed ? parsed.problem : undefined;
}

export interface BedrockGrant {
  statements: PolicyStatement[];
  /** Resources with a wildcard (each limited by a condition), to acknowledge one by one. */
  wildcards: { resource: string; reason: string }[];
}

const invokeActions = ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"];

/** The grant for one model, called from `stack` (the message function's own place). */
export function bedrockInvokeGrant(model: BedrockModel, stack: BedrockPlace): BedrockGrant {
  const { partition, region, account } = "at" in model && model.at ? model.at : stack;
  const foundationModel = (modelRegion: string, modelId: string) =>
    `arn:${partition}:bedrock:${modelRegion}::foundation-model/${modelId}`;
  const profileArn = (profileRegion: string, profileAccount: string, profileId: string) =>
    `arn:${partition}:bedrock:${profileRegion}:${profileAccount}:inference-profile/${profileId}`;
  const allow = (resources: string[], conditions?: Record<string, Record<string, string>>) =>
    new PolicyStatement({ actions: invokeActions, resources, ...(conditions ? { conditions } : {}) });
  const throughProfile = (arn: string) => ({ "bedrock:InferenceProfileArn": arn });

  switch (model.kind) {
    case "foundation-model":
      return { statements: [allow([foundationModel(region, model.modelId)])], wildcards: [] };
    case "geographic-profile": {
      const profile = profileArn(region, account, model.profileId);
      const destinations = [...new Set([region, ...geographies[model.geography]])].map((destination) =>
        foundationModel(destination, model.modelId),
      );
      return {
        statements: [allow([profile]), allow(destinations, { StringEquals: throughProfile(profile) })],
        wildcards: destinations
          .filter((resource) => resource.includes("*"))
          .map((resource) => ({
            resource,
            reason: `The ${model.geography}. inference profile routes to this model in any region of its geography; the grant holds only through that profile (bedrock:InferenceProfileArn).`,
          })),
      };
    }
    case "global-profile": {
      const profile = profileArn(region, account, model.profileId);
      return {
        statements: [
          allow([profile], { StringEquals: { "aws:RequestedRegion": region } }),
          allow([foundationModel(region, model.modelId)], {
            StringEquals: { "aws:RequestedRegion": region, ...throughProfile(profile) },
          }),
          // The region-less ARN is what Bedrock authorizes when the global profile routes elsewhere.
          allow([foundationModel("", model.modelId)], {
            StringEquals: { "aws:RequestedRegion": "unspecified", ...throughProfile(profile) },
          }),
        ],
        wildcards: [],
      };
    }
    case "arn":
      if (model.resourceType === "application-inference-profile") {
        // Which models it copies is not in its ARN; they are usable only through this profile.
        const models = [foundationModel("*", "*"), foundationModel("", "*")];
        return {
          statements: [allow([model.arn]), allow(models, { StringEquals: throughProfile(model.arn) })],
          wildcards: models.map((resource) => ({
            resource,
            reason:
              "An application inference profile's models are not named in its ARN; the grant holds only through that one profile (bedrock:InferenceProfileArn).",
          })),
        };
      }
      return { statements: [allow([model.arn])], wildcards: [] };
  }
}
