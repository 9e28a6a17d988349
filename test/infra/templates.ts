/**
 * The synthesized app as the template tests read it: the root stack's template, each nested stack's
 * (lib/concerns.ts, the console's hosting), and every resource of all of them by logical id (a nested
 * stack's id that another stack already uses as `<nested stack>/<id>`). In the nested stacks'
 * resources, a parameter the root fills with one of its own resources (`referenceto…Arn`) is
 * replaced by what the root passes in, so a grant reads as it would in one stack.
 */
import { type CfnResource, NestedStack, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { buildApp } from "#lib/app";

export type Resources = Record<
  string,
  {
    Type: string;
    Properties: Record<string, unknown>;
    DeletionPolicy?: string;
    UpdateReplacePolicy?: string;
  }
>;

/** `value` with every `{"Ref": name}` of `parameters` replaced by its value. */
function inline(value: unknown, parameters: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((item) => inline(item, parameters));
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    const [only] = entries;
    if (entries.length === 1 && only?.[0] === "Ref" && typeof only[1] === "string" && only[1] in parameters) {
      return parameters[only[1]];
    }
    return Object.fromEntries(entries.map(([key, item]) => [key, inline(item, parameters)]));
  }
  return value;
}

export function synthesize(context: Record<string, unknown>) {
  const { app, stack } = buildApp(context);
  const root = Template.fromStack(stack);
  const rootResources = root.toJSON().Resources as Resources;
  const nestedStacks = stack.node
    .findAll()
    .filter((construct): construct is NestedStack => construct instanceof NestedStack);
  const nested = new Map(nestedStacks.map((child) => [child.node.id, Template.fromStack(child)] as const));
  const resources: Resources = { ...rootResources };
  /** The stack of each key of `resources`: "" for the root, else the nested stack's id. */
  const stackOf: Record<string, string> = Object.fromEntries(
    Object.keys(rootResources).map((id) => [id, ""]),
  );
  for (const child of nestedStacks) {
    const parent = Stack.of(child.nestedStackResource ?? child);
    const parameters = (
      parent === stack
        ? rootResources[stack.getLogicalId(child.nestedStackResource as CfnResource)]?.Properties.Parameters
        : undefined
    ) as Record<string, unknown> | undefined;
    const template = nested.get(child.node.id)?.toJSON() as { Resources: Resources };
    for (const [id, resource] of Object.entries(template.Resources)) {
      const key = resources[id] ? `${child.node.id}/${id}` : id;
      resources[key] = inline(resource, parameters ?? {}) as Resources[string];
      stackOf[key] = child.node.id;
    }
  }
  return { app, stack, root, nested, resources, stackOf };
}
