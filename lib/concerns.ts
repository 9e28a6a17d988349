/**
 * Which CloudFormation stack deploys each function (docs/architecture.md, "Stacks: a root and one
 * nested stack per concern"). CloudFormation allows 500 resources a stack, and a route costs seven
 * (function, role, policy, log group, integration, permission, route) plus its alarms, so the
 * functions live in nested stacks by concern, and the root keeps what others hold on to: the table,
 * the keys, the user pool, the queues, the HTTP API with its routes and authorizers, the stream
 * function (its URL is the published `StreamUrl`) and the alarm topic.
 *
 * Every function definition (lib/routes.ts, lib/event-sources.ts) names its `stack`. A new concern
 * adds its name here, sets it on its definitions, and, only if it owns resources of its own (a
 * bucket, a queue), one nested-stack file under lib/ that extends ConcernStack (lib/concern-stack.ts)
 * and is named in lib/api-stack.ts's `concernStackClasses`.
 *
 * Pure data (no CDK imports).
 */

/** The nested stacks that host functions, and what each holds. */
export const concernStacks = {
  PublicApi:
    "The public API's functions: conversations, messages, feedback and ratings, listings, ping, the OpenAPI document and route misses.",
  ManageAccounts:
    "Management functions about the organization and access to it: the caller, organizations, members, API keys, usage, analytics and webhook endpoints.",
  ManageChatbots:
    "Management functions about chatbots and their conversations: chatbots, knowledge, tools and the console's conversation views.",
  Events:
    "The event-driven functions: the table stream's fan-out (webhook events, inactivity checks, analytics counters), webhook deliveries and conversation timers, with their event source mappings.",
} as const;

export type ConcernStackName = keyof typeof concernStacks;

/**
 * Where a function is deployed: `Root` for the few whose identity others hold (the authorizers the
 * HTTP API's authorizers point at, the stream function whose URL clients call), else its concern.
 */
export type StackName = "Root" | ConcernStackName;

export const concernStackNames = Object.keys(concernStacks) as ConcernStackName[];

/** The share of CloudFormation's 500 resources a stack may use: the root keeps 40 % free, a nested stack 25 %. */
export const resourceBudget = { limit: 500, root: 0.6, nested: 0.75 } as const;
