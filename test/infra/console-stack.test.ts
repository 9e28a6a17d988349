/**
 * The console's hosting (lib/console-stack.ts): a nested stack of its own, so the API stack's
 * resource count grows by one; a private bucket read through origin access control; HTTPS; the
 * security headers; the API and the stream path on the same distribution, uncached; config.json
 * written at deploy time from the stack's values; the ConsoleUrl and ConsoleStreamUrl outputs.
 */
import type { NestedStack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "#lib/app";
import { apiPathPatterns, streamPath, widgetHosting } from "#lib/console-hosting";

const context = { "aws:cdk:bundling-stacks": [], stage: "test", bedrockModelIds: "anthropic.claude-test-v1" };
type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

let root: Template;
let hosting: Template;
let resources: Resources;

beforeAll(() => {
  const { stack } = buildApp(context);
  root = Template.fromStack(stack);
  hosting = Template.fromStack(stack.node.findChild("Console") as NestedStack);
  resources = hosting.toJSON().Resources as Resources;
}, 120_000);

const ofType = (type: string) => Object.values(resources).filter((resource) => resource.Type === type);

describe("the console's hosting", () => {
  it("is a nested stack: the API stack holds one resource for it, and none of its own", () => {
    const rootResources = root.toJSON().Resources as Resources;
    const types = Object.values(rootResources).map((resource) => resource.Type);
    expect(Object.keys(rootResources).filter((id) => id.startsWith("ConsoleNestedStack"))).toHaveLength(1);
    expect(
      types.filter((type) => type.startsWith("AWS::CloudFront::") || type === "AWS::S3::Bucket"),
    ).toEqual([]);
  });

  it("keeps the files in a private bucket (public access blocked, TLS only, no website) read through OAC", () => {
    const buckets = ofType("AWS::S3::Bucket");
    expect(buckets).toHaveLength(2);
    for (const bucket of buckets) {
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties.WebsiteConfiguration).toBeUndefined();
    }
    for (const policy of ofType("AWS::S3::BucketPolicy")) {
      expect(JSON.stringify(policy.Properties)).toContain('"aws:SecureTransport":"false"');
    }
    hosting.hasResourceProperties("AWS::CloudFront::OriginAccessControl", {
      OriginAccessControlConfig: Match.objectLike({
        OriginAccessControlOriginType: "s3",
        SigningBehavior: "always",
      }),
    });
    hosting.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Action: "s3:GetObject", Principal: { Service: "cloudfront.amazonaws.com" } }),
        ]),
      }),
    });
  });

  it("sends a strict Content-Security-Policy, HSTS, nosniff, DENY framing and a referrer policy", () => {
    const [policy] = ofType("AWS::CloudFront::ResponseHeadersPolicy");
    const config = JSON.stringify(policy?.Properties);
    for (const directive of [
      "script-src 'self'",
      "frame-ancestors 'none'",
      "object-src 'none'",
      "connect-src 'self' https://cognito-idp.",
    ]) {
      expect(config).toContain(directive);
    }
    hosting.hasResourceProperties("AWS::CloudFront::ResponseHeadersPolicy", {
      ResponseHeadersPolicyConfig: Match.objectLike({
        SecurityHeadersConfig: Match.objectLike({
          StrictTransportSecurity: Match.objectLike({
            AccessControlMaxAgeSec: 63_072_000,
            IncludeSubdomains: true,
          }),
          ContentTypeOptions: { Override: true },
          FrameOptions: { FrameOption: "DENY", Override: true },
          ReferrerPolicy: { ReferrerPolicy: "strict-origin-when-cross-origin", Override: true },
        }),
      }),
    });
  });

  it("serves the API and the stream path on the same domain, HTTPS only, uncached, every viewer header but Host", () => {
    const [distribution] = ofType("AWS::CloudFront::Distribution");
    const config = distribution?.Properties.DistributionConfig as {
      DefaultCacheBehavior: Record<string, unknown>;
      CacheBehaviors: Record<string, unknown>[];
      Origins: { Id: string; DomainName: unknown; S3OriginConfig?: unknown }[];
    };
    expect(config.DefaultCacheBehavior.ViewerProtocolPolicy).toBe("redirect-to-https");
    expect(config.DefaultCacheBehavior.FunctionAssociations).toHaveLength(1);
    expect(config.CacheBehaviors.map((behavior) => behavior.PathPattern)).toEqual([
      streamPath,
      ...apiPathPatterns,
      widgetHosting.loaderPath,
      `${widgetHosting.assetsPrefix}*`,
    ]);
    const cachingDisabled = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad";
    const allViewerExceptHost = "b689b0a8-53d0-40ab-baf2-68738e2966ac";
    const toApi = config.CacheBehaviors.slice(0, apiPathPatterns.length + 1);
    for (const behavior of toApi) {
      expect(behavior).toMatchObject({
        ViewerProtocolPolicy: "https-only",
        CachePolicyId: cachingDisabled,
        OriginRequestPolicyId: allViewerExceptHost,
      });
      expect(behavior.AllowedMethods).toContain("POST");
    }
    const [stream, ...api] = toApi;
    expect(stream?.Compress).toBe(false);
    expect(new Set(api.map((behavior) => behavior.TargetOriginId)).size).toBe(1);
    expect(stream?.TargetOriginId).not.toBe(api[0]?.TargetOriginId);
    const origin = (id: unknown) => JSON.stringify(config.Origins.find((candidate) => candidate.Id === id));
    expect(origin(api[0]?.TargetOriginId)).toContain("execute-api");
    expect(origin(stream?.TargetOriginId)).toContain("FunctionUrl");
  });

  it("tells the API each viewer's address, and proves it came through CloudFront", () => {
    const [distribution] = ofType("AWS::CloudFront::Distribution");
    const config = distribution?.Properties.DistributionConfig as {
      CacheBehaviors: Record<string, unknown>[];
      Origins: { Id: string; CustomOriginConfig?: unknown; OriginCustomHeaders?: { HeaderName: string }[] }[];
    };
    const toApi = config.CacheBehaviors.slice(0, apiPathPatterns.length + 1);
    const viewerAddress = Object.entries(resources).find(([, resource]) =>
      JSON.stringify(resource.Properties.FunctionCode ?? "").includes("x-viewer-address"),
    )?.[0];
    expect(viewerAddress).toBeDefined();
    for (const behavior of toApi) {
      expect(JSON.stringify(behavior.FunctionAssociations)).toContain(viewerAddress);
      const origin = config.Origins.find((candidate) => candidate.Id === behavior.TargetOriginId);
      expect(origin?.OriginCustomHeaders?.map((header) => header.HeaderName)).toEqual(["X-Origin-Verify"]);
    }
  });

  it("serves the widget compressed and cached, readable from any origin, from the console's files", () => {
    const [distribution] = ofType("AWS::CloudFront::Distribution");
    const config = distribution?.Properties.DistributionConfig as {
      DefaultCacheBehavior: Record<string, unknown>;
      CacheBehaviors: Record<string, unknown>[];
    };
    const widget = config.CacheBehaviors.slice(apiPathPatterns.length + 1);
    const cachingOptimized = "658327ea-f89d-4fab-a63d-7e88639e58f6";
    for (const behavior of widget) {
      expect(behavior).toMatchObject({
        Compress: true,
        CachePolicyId: cachingOptimized,
        TargetOriginId: config.DefaultCacheBehavior.TargetOriginId,
      });
    }
    hosting.hasResourceProperties("AWS::CloudFront::ResponseHeadersPolicy", {
      ResponseHeadersPolicyConfig: Match.objectLike({
        CorsConfig: Match.objectLike({
          AccessControlAllowCredentials: false,
          AccessControlAllowOrigins: { Items: ["*"] },
          AccessControlAllowMethods: { Items: ["GET", "HEAD"] },
        }),
      }),
    });
    const deployments = ofType("Custom::CDKBucketDeployment").map((deployment) =>
      JSON.stringify(deployment.Properties),
    );
    expect(deployments.filter((text) => text.includes(widgetHosting.loaderCacheControl))).toHaveLength(1);
    expect(
      ofType("Custom::CDKBucketDeployment").filter(
        (deployment) =>
          deployment.Properties.DestinationBucketKeyPrefix === widgetHosting.assetsPrefix.slice(1) &&
          JSON.stringify(deployment.Properties).includes(widgetHosting.assetsCacheControl),
      ),
    ).toHaveLength(1);
  });

  it("writes config.json at deploy time from the stack's values, never cached", () => {
    const deployments = ofType("Custom::CDKBucketDeployment");
    expect(deployments).toHaveLength(4);
    const pages = deployments.find((deployment) =>
      JSON.stringify(deployment.Properties).includes("no-cache"),
    );
    const markers = JSON.stringify(pages?.Properties.SourceMarkers);
    for (const value of ["People", "ConsoleClient", "HttpApi", "Distribution"])
      expect(markers).toContain(value);
    expect(
      deployments.some((deployment) => JSON.stringify(deployment.Properties).includes("immutable")),
    ).toBe(true);
  });

  it("outputs ConsoleUrl and the stream URL on the console's domain", () => {
    root.hasOutput("ConsoleUrl", {});
    root.hasOutput("ConsoleStreamUrl", {});
    const outputs = root.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(JSON.stringify(outputs.ConsoleUrl?.Value)).toContain("Console");
    expect(outputs.ConsoleStreamUrl?.Value).toEqual(outputs.ConsoleUrl?.Value);
  });
});
