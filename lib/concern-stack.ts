/**
 * The nested stack of one concern (lib/concerns.ts): the functions whose definitions name it, each
 * with its log group and role, the HTTP API integrations and invoke permissions of its routes, and
 * the event source mappings of its event functions. The routes themselves, the authorizers and the
 * shared resources stay in the root stack (lib/api-stack.ts), which hands them in.
 *
 * A concern with resources of its own (a bucket, a queue) extends this class in a file of its own:
 * it creates them in its constructor, then adds its functions' variables with `functionEnvironment()` and
 * its own grants with `grant()`, and is named in lib/api-stack.ts's `concernStackClasses`. A
 * dead-letter queue of its own goes into `failureQueues`: the Monitoring stack alarms on its depth
 * like the root's (docs/operations.md). Any alarm of its own notifies `shared.alarmAction`.
 */
import { NestedStack, type NestedStackProps, Stack } from "aws-cdk-lib";
import {
  type HttpApi,
  HttpIntegration,
  HttpIntegrationType,
  PayloadFormatVersion,
} from "aws-cdk-lib/aws-apigatewayv2";
import { ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import type { ConcernStackName } from "./concerns.ts";
import { deployFunction, type SharedResources } from "./lambda-functions.ts";
import type { ExtraGrant, FunctionDefinition } from "./routes.ts";

export interface ConcernStackProps extends NestedStackProps {
  shared: SharedResources;
}

export class ConcernStack extends NestedStack {
  readonly functions = new Map<string, LambdaFunction>();
  /** Queues of this concern whose every message is a failure to look at (its dead-letter queues). */
  readonly failureQueues: Queue[] = [];
  protected readonly shared: SharedResources;

  constructor(scope: Construct, id: ConcernStackName, props: ConcernStackProps) {
    super(scope, id, props);
    this.shared = props.shared;
  }

  /** Deploys one function of this concern. */
  addFunction(definition: FunctionDefinition): LambdaFunction {
    const fn = deployFunction(this, definition, this.shared, {
      environment: this.functionEnvironment(),
      grant: (target, grant) => this.grant(target, grant),
    });
    this.functions.set(definition.id, fn);
    return fn;
  }

  /** Variables this concern's functions get beyond the shared ones (resources of its own). */
  protected functionEnvironment(): Readonly<Record<string, string>> {
    return {};
  }

  /** Gives a grant on a resource of this concern's own; `false` leaves it to the shared ones. */
  protected grant(_fn: LambdaFunction, _grant: ExtraGrant): boolean {
    return false;
  }
}

/**
 * The HTTP API integration of a route served by `fn`, in `fn`'s own stack, with the permission for
 * API Gateway to invoke it on that route's path (every method and stage, as CDK's own Lambda
 * integration scopes it). Returns the integration's id for the route, which stays in the root.
 */
export function integrateRoute(
  fn: LambdaFunction,
  api: HttpApi,
  id: string,
  path: string | undefined,
): string {
  const stack = Stack.of(fn);
  const integration = new HttpIntegration(stack, `${id}Integration`, {
    httpApi: api,
    integrationType: HttpIntegrationType.AWS_PROXY,
    integrationUri: fn.functionArn,
    payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
  });
  fn.addPermission(`${id}ApiPermission`, {
    scope: stack,
    principal: new ServicePrincipal("apigateway.amazonaws.com"),
    sourceArn: stack.formatArn({
      service: "execute-api",
      resource: api.apiId,
      resourceName: `*/*${path ?? ""}`,
    }),
  });
  return integration.integrationId;
}
