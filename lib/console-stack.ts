/**
 * The console on AWS, in a nested stack of its own (the API stack is close to CloudFormation's
 * 500-resource limit; a nested stack counts as one resource there): a private S3 bucket (public
 * access blocked, TLS only, no website hosting) behind a CloudFront distribution that reads it
 * through origin access control, HTTPS only, with the security headers of lib/console-hosting.ts
 * (a strict Content-Security-Policy, HSTS, nosniff, no framing, a referrer policy).
 *
 * The API is reached on the same CloudFront domain: /api/*, /manage/*, /openapi.json and /ping go
 * to the HTTP API, /api/message/stream to the streaming function URL, uncached and with every
 * viewer header but Host. So the browser makes no cross-origin request and no CORS is configured
 * (docs/architecture.md says why). /config.json is written at deploy time from the stack's values.
 *
 * The website widget is served from the same distribution (lib/console-hosting.ts `widgetHosting`):
 * `/widget.js` and its content-hashed panel under `/widget/`, compressed, readable from any origin.
 * Requests to the API carry the viewer's address (`X-Viewer-Address`, written by a viewer-request
 * function) and the stack's origin secret (`X-Origin-Verify`), so the session route's per-address
 * limit counts visitors, not CloudFront's edges.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import {
  CfnOutput,
  DefaultStackSynthesizer,
  Duration,
  NestedStack,
  type NestedStackProps,
  RemovalPolicy,
  Stack,
  Token,
  Validations,
} from "aws-cdk-lib";
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  PriceClass,
  ResponseHeadersPolicy,
  Function as ViewerFunction,
  ViewerProtocolPolicy,
} from "aws-cdk-lib/aws-cloudfront";
import { FunctionUrlOrigin, HttpOrigin, S3BucketOrigin } from "aws-cdk-lib/aws-cloudfront-origins";
import type { IFunctionUrl } from "aws-cdk-lib/aws-lambda";
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  ObjectOwnership,
} from "aws-cdk-lib/aws-s3";
import { BucketDeployment, CacheControl, type ISource, Source } from "aws-cdk-lib/aws-s3-deployment";
import { CfnWebACL } from "aws-cdk-lib/aws-wafv2";
import type { Construct } from "constructs";
import {
  apiPathPatterns,
  type ConsoleRuntimeConfig,
  configPath,
  contentSecurityPolicy,
  immutablePrefix,
  securityHeaders,
  streamPath,
  widgetHosting,
} from "./console-hosting.ts";
import { createLogGroup } from "./lambda-functions.ts";
import {
  consoleDirectory,
  consoleDist,
  consoleNeedsBuild,
  widgetDirectory,
  widgetDist,
  widgetNeedsBuild,
} from "./local/console-server.ts";
import type { StageConfig } from "./stage-config.ts";

const root = join(consoleDirectory, "..");

export interface ConsoleStackProps extends NestedStackProps {
  /** The HTTP API's id: its execute-api host is the API origin. */
  apiId: string;
  /** The API's public base URL (shown on Settings → API). */
  apiBaseUrl: string;
  /** The streaming function's URL. */
  streamFunctionUrl: IFunctionUrl;
  userPoolId: string;
  clientId: string;
  /** Sent to the API's origins as `X-Origin-Verify` (functions/http/client-address.ts). */
  originVerifySecret: string;
  removalPolicy: RemovalPolicy;
  /** The stage's configuration: the deployment function's log group is made like every other. */
  config: StageConfig;
  /**
   * A web ACL with a rate-based rule (requests per IP in any 5 minutes) in front of the distribution,
   * and so of the API paths it serves (an HTTP API cannot take a web ACL of its own).
   */
  waf?: { rateLimit: number };
}

export class ConsoleStack extends NestedStack {
  readonly distribution: Distribution;
  /** https://<distribution domain>/ */
  readonly consoleUrl: string;

  constructor(scope: Construct, id: string, props: ConsoleStackProps) {
    super(scope, id, props);
    const { region, urlSuffix } = Stack.of(this);
    const destroy = props.removalPolicy === RemovalPolicy.DESTROY;

    // Access logs of the bucket and of the distribution (CloudFront's standard logs need ACLs).
    const logs = new Bucket(this, "AccessLogs", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: props.removalPolicy,
      autoDeleteObjects: destroy,
    });
    Validations.of(logs).acknowledge({
      id: "AwsSolutions::AwsSolutions-S1",
      reason: "This is the access-log bucket; logging it into itself would log its own log writes.",
    });

    const files = new Bucket(this, "Files", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      serverAccessLogsBucket: logs,
      serverAccessLogsPrefix: "bucket/",
      removalPolicy: props.removalPolicy,
      autoDeleteObjects: destroy,
    });

    const cognitoOrigin = `https://cognito-idp.${region}.${urlSuffix}`;
    const headers = new ResponseHeadersPolicy(this, "SecurityHeaders", {
      comment: "The console's security headers: strict CSP, HSTS, nosniff, no framing",
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          contentSecurityPolicy: contentSecurityPolicy(cognitoOrigin, { upgradeInsecure: true }),
          override: true,
        },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.seconds(securityHeaders.strictTransportSecurity.maxAgeSeconds),
          includeSubdomains: securityHeaders.strictTransportSecurity.includeSubdomains,
          preload: securityHeaders.strictTransportSecurity.preload,
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: {
          referrerPolicy: HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN,
          override: true,
        },
      },
      customHeadersBehavior: {
        customHeaders: [
          { header: "Permissions-Policy", value: securityHeaders.permissionsPolicy, override: true },
        ],
      },
    });

    // Page paths (no file extension) are the single-page app: answered with index.html. A viewer
    // function, not a distribution-wide error page, so the API's own 404s stay as they are.
    const appPaths = new ViewerFunction(this, "AppPaths", {
      comment: "Serves index.html for the console's page paths",
      runtime: FunctionRuntime.JS_2_0,
      code: FunctionCode.fromInline(
        "function handler(event) { var request = event.request; if (!/\\.[a-z0-9]+$/i.test(request.uri)) request.uri = '/index.html'; return request; }",
      ),
    });

    const originHeaders = { "X-Origin-Verify": props.originVerifySecret };
    const api = new HttpOrigin(`${props.apiId}.execute-api.${region}.${urlSuffix}`, {
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
      customHeaders: originHeaders,
    });
    const stream = new FunctionUrlOrigin(props.streamFunctionUrl, {
      readTimeout: Duration.seconds(60),
      customHeaders: originHeaders,
    });
    // The viewer's own address, for the API (whatever the viewer sent in this header is replaced).
    const viewerAddress = new ViewerFunction(this, "ViewerAddress", {
      comment: "Passes the viewer's address to the API as X-Viewer-Address",
      runtime: FunctionRuntime.JS_2_0,
      code: FunctionCode.fromInline(
        "function handler(event) { var request = event.request; request.headers['x-viewer-address'] = { value: event.viewer.ip }; return request; }",
      ),
    });
    const toApi = {
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      responseHeadersPolicy: headers,
      functionAssociations: [{ function: viewerAddress, eventType: FunctionEventType.VIEWER_REQUEST }],
    };
    // The widget's files: read by pages of any origin (its panel is a module script, fetched with CORS).
    const widgetHeaders = new ResponseHeadersPolicy(this, "WidgetHeaders", {
      comment: "The website widget's files: readable from any origin, nosniff, HSTS",
      corsBehavior: {
        accessControlAllowOrigins: ["*"],
        accessControlAllowMethods: ["GET", "HEAD"],
        accessControlAllowHeaders: ["*"],
        accessControlAllowCredentials: false,
        originOverride: true,
      },
      securityHeadersBehavior: {
        contentTypeOptions: { override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.seconds(securityHeaders.strictTransportSecurity.maxAgeSeconds),
          includeSubdomains: securityHeaders.strictTransportSecurity.includeSubdomains,
          override: true,
        },
      },
    });
    const filesOrigin = S3BucketOrigin.withOriginAccessControl(files);
    const toWidget = {
      origin: filesOrigin,
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      compress: true,
      responseHeadersPolicy: widgetHeaders,
    };

    const webAcl = props.waf ? this.rateLimitingWebAcl(props.waf.rateLimit) : undefined;
    this.distribution = new Distribution(this, "Distribution", {
      comment: "Chatbot console and its API on one origin",
      ...(webAcl ? { webAclId: webAcl.attrArn } : {}),
      defaultRootObject: "index.html",
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: logs,
      logFilePrefix: "cloudfront/",
      defaultBehavior: {
        origin: filesOrigin,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: headers,
        functionAssociations: [{ function: appPaths, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      // In order: the stream path before /api/*.
      additionalBehaviors: {
        // Not compressed: CloudFront passes each event on as the function writes it.
        [streamPath]: { origin: stream, ...toApi, compress: false },
        ...Object.fromEntries(apiPathPatterns.map((pattern) => [pattern, { origin: api, ...toApi }])),
        [widgetHosting.loaderPath]: toWidget,
        [`${widgetHosting.assetsPrefix}*`]: toWidget,
      },
    });
    Validations.of(this.distribution).acknowledge({
      id: "AwsSolutions::AwsSolutions-CFR1",
      reason: "The console is for every organization, wherever its people are: no geographic restriction.",
    });
    if (!webAcl) {
      Validations.of(this.distribution).acknowledge({
        id: "AwsSolutions::AwsSolutions-CFR2",
        reason:
          "WAF is the operator's choice (-c waf=true): the files are static, and the API behind the same domain limits each key and person itself (token buckets, Cognito) behind the stage's throttle.",
      });
    }
    Validations.of(this.distribution).acknowledge({
      id: "AwsSolutions::AwsSolutions-CFR4",
      reason:
        "The console uses CloudFront's default *.cloudfront.net certificate, whose TLS policy CloudFront sets; a custom domain would pin TLS 1.2.",
    });
    this.consoleUrl = `https://${this.distribution.distributionDomainName}/`;

    // The built files: hashed assets cached for a year, index.html and config.json revalidated.
    const dist = consoleDistFor(this);
    // The deployment function's own log group, retained and masked like the functions' (the one
    // Lambda would create itself keeps its logs forever, unmasked). Both deployments share the
    // function, and so the group.
    const deploymentLogs = createLogGroup(this, "DeploymentLogs", props.config);
    new BucketDeployment(this, "Assets", {
      destinationBucket: files,
      destinationKeyPrefix: immutablePrefix.slice(1),
      sources: [dist.assets],
      cacheControl: [CacheControl.fromString("public, max-age=31536000, immutable")],
      prune: false,
      memoryLimit: 512,
      logGroup: deploymentLogs,
    });
    const config: ConsoleRuntimeConfig = {
      apiBaseUrl: props.apiBaseUrl,
      streamUrl: this.consoleUrl,
      cognito: {
        endpoint: `${cognitoOrigin}/`,
        region,
        userPoolId: props.userPoolId,
        clientId: props.clientId,
      },
    };
    new BucketDeployment(this, "Pages", {
      destinationBucket: files,
      sources: [dist.pages, Source.jsonData(configPath.slice(1), config)],
      cacheControl: [CacheControl.noCache()],
      // Old hashed assets stay for open tabs; the Assets deployment does not prune either.
      prune: false,
      memoryLimit: 512,
      logGroup: deploymentLogs,
    });
    // The widget: its panel (content-hashed) for a year, widget.js for an hour; old panels stay for
    // pages that loaded an older widget.js.
    const widget = widgetDistFor(this);
    new BucketDeployment(this, "WidgetAssets", {
      destinationBucket: files,
      destinationKeyPrefix: widgetHosting.assetsPrefix.slice(1),
      sources: [widget.assets],
      cacheControl: [CacheControl.fromString(widgetHosting.assetsCacheControl)],
      prune: false,
      memoryLimit: 512,
      logGroup: deploymentLogs,
    });
    new BucketDeployment(this, "WidgetLoader", {
      destinationBucket: files,
      sources: [widget.loader],
      cacheControl: [CacheControl.fromString(widgetHosting.loaderCacheControl)],
      contentType: "text/javascript; charset=utf-8",
      prune: false,
      memoryLimit: 512,
      logGroup: deploymentLogs,
    });
    this.acknowledgeDeploymentHandler(files);

    new CfnOutput(this, "DistributionId", { value: this.distribution.distributionId });
  }

  /**
   * A CloudFront-scoped web ACL: a rate-based rule blocking an IP address past `limit` requests in any
   * 5 minutes. CloudFront's web ACLs live in us-east-1, so the stage must be deployed there to have one.
   */
  private rateLimitingWebAcl(limit: number): CfnWebACL {
    const { region } = Stack.of(this);
    if (!Token.isUnresolved(region) && region !== "us-east-1") {
      throw new Error(
        `Invalid stage configuration: waf: a CloudFront web ACL can only be created in us-east-1, and this stack is in ${region} (docs/operations.md, "Shared capacity")`,
      );
    }
    const visibility = (metricName: string) => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      sampledRequestsEnabled: true,
    });
    return new CfnWebACL(this, "WebAcl", {
      scope: "CLOUDFRONT",
      defaultAction: { allow: {} },
      visibilityConfig: visibility("ChatbotConsoleWebAcl"),
      rules: [
        {
          name: "RatePerIp",
          priority: 0,
          action: { block: {} },
          statement: { rateBasedStatement: { limit, aggregateKeyType: "IP" } },
          visibilityConfig: visibility("ChatbotConsoleRatePerIp"),
        },
      ],
    });
  }

  /**
   * BucketDeployment's handler is CDK's own function: it copies the build from CDK's asset bucket
   * into the console's bucket with CDK's grants and managed logging policy. Each finding by its id.
   */
  private acknowledgeDeploymentHandler(files: Bucket): void {
    const handler = this.node.children.find((child) =>
      child.node.id.startsWith("Custom::CDKBucketDeployment"),
    );
    if (!handler) throw new Error("BucketDeployment's handler not found");
    const filesArn = `<${this.getLogicalId(files.node.defaultChild as CfnBucket)}.Arn>/*`;
    const stagingBucket = asNagShowsIt(
      this,
      `arn:${this.partition}:s3:::cdk-${DefaultStackSynthesizer.DEFAULT_QUALIFIER}-assets-${this.account}-${this.region}/*`,
    );
    const wildcards = [
      ...["s3:GetObject*", "s3:GetBucket*", "s3:List*", "s3:DeleteObject*", "s3:Abort*"].map(
        (action) => `Action::${action}`,
      ),
      `Resource::${filesArn}`,
      `Resource::${stagingBucket}`,
    ];
    const reason =
      "CDK's BucketDeployment handler: reads the build from CDK's asset bucket and writes (and replaces) the console's files in its bucket, nothing else; the grants are CDK's.";
    for (const finding of wildcards) {
      Validations.of(handler).acknowledge({ id: `AwsSolutions::AwsSolutions-IAM5[${finding}]`, reason });
    }
    Validations.of(handler).acknowledge({
      id: "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
      reason: "CDK's BucketDeployment handler logs with the managed basic-execution policy CDK gives it.",
    });
    Validations.of(handler).acknowledge({
      id: "AwsSolutions::AwsSolutions-L1",
      reason: "CDK's BucketDeployment handler runs on the runtime CDK chooses for it.",
    });
  }
}

/**
 * A resource as cdk-nag prints it in a finding id: partition, region and account as `<AWS::…>`
 * while they are tokens (an environment-agnostic synth), literally once known.
 */
function asNagShowsIt(stack: Stack, resource: string): string {
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

/**
 * The console's files for the deployment. When the app synthesizes without bundling (the template
 * tests), a placeholder page; otherwise console/dist, built first when missing or older than its
 * sources (Vite, offline), and a clear failure if it cannot be built.
 */
function consoleDistFor(stack: Stack): { assets: ISource; pages: ISource } {
  if (!stack.bundlingRequired) {
    const placeholder = Source.data("index.html", "<!doctype html><title>Console</title>");
    return { assets: placeholder, pages: placeholder };
  }
  ensureConsoleBuilt();
  const assets = immutablePrefix.slice(1, -1);
  return {
    assets: Source.asset(join(consoleDist, assets)),
    pages: Source.asset(consoleDist, { exclude: [assets] }),
  };
}

/** The widget's build for the deployment (built first when missing or stale), or placeholders. */
function widgetDistFor(stack: Stack): { loader: ISource; assets: ISource } {
  if (!stack.bundlingRequired) {
    return {
      loader: Source.data(widgetHosting.loaderPath.slice(1), "/* widget */"),
      assets: Source.data("panel.js", "/* panel */"),
    };
  }
  if (widgetNeedsBuild()) {
    try {
      execFileSync(process.execPath, [join(widgetDirectory, "scripts/build.mjs")], { stdio: "inherit" });
    } catch (error) {
      throw new Error(
        `The widget could not be built for the deployment (widget/scripts/build.mjs): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return {
    loader: Source.asset(widgetDist, { exclude: ["*", `!${widgetHosting.loaderPath.slice(1)}`] }),
    assets: Source.asset(join(widgetDist, widgetHosting.assetsPrefix.slice(1, -1))),
  };
}

function ensureConsoleBuilt(): void {
  if (!consoleNeedsBuild()) return;
  try {
    execFileSync("npm", ["run", "build", "--workspace", "console"], { cwd: root, stdio: "inherit" });
  } catch (error) {
    throw new Error(
      `The console could not be built for the deployment (npm run build --workspace console): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
