/**
 * `operators …` and `members …`: who signs in to the console. People live in the stage's user pool
 * (Cognito on AWS, cognito-local locally); the CLI finds it through COGNITO_USER_POOL_ID (the
 * stack's UserPoolId output; the local runtime's runtime.json names its own).
 */
import { CognitoIdentityProviderClient } from "@aws-sdk/client-cognito-identity-provider";
import { createCognitoDirectory, type PeopleDirectory } from "#functions/domain/directory";
import {
  changeMemberRole,
  grantOperator,
  inviteMember,
  listMembers,
  removeMember,
  revokeOperator,
} from "#functions/domain/people";
import { AppError } from "#functions/errors";
import type { Role } from "#functions/store/items";
import { type AdminContext, type Command, optional, positional, required } from "./command.ts";

function directoryOf(ctx: AdminContext): PeopleDirectory {
  const userPoolId = ctx.environment.COGNITO_USER_POOL_ID;
  if (!userPoolId) {
    throw new AppError("invalid_argument", {
      detail: "Set COGNITO_USER_POOL_ID to the stack's UserPoolId output (the local runtime sets it itself)",
    });
  }
  const endpoint = ctx.environment.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER;
  const region = ctx.environment.AWS_REGION;
  const local = endpoint?.startsWith("http://127.0.0.1");
  return createCognitoDirectory(
    userPoolId,
    new CognitoIdentityProviderClient({
      ...(endpoint ? { endpoint } : {}),
      ...(region ? { region } : local ? { region: "us-east-1" } : {}),
      ...(local ? { credentials: { accessKeyId: "local", secretAccessKey: "local" } } : {}),
    }),
  );
}

function roleOption(value: string | undefined): Role {
  if (value !== "admin" && value !== "viewer") {
    throw new AppError("invalid_argument", { detail: "--role must be admin or viewer" });
  }
  return value;
}

export const peopleCommands: Command[] = [
  {
    group: "operators",
    name: "grant",
    summary: "Make a person a platform operator (invited by e-mail first if they have no account).",
    options: { email: { type: "string" } },
    help: { email: "Their e-mail address (required)" },
    run: async (ctx, input) => {
      const email = required(input, "email");
      const person = await directoryOf(ctx).invite(email.trim().toLowerCase());
      const grant = await grantOperator(ctx, { userId: person.userId, email });
      return { ...grant, invitation: person.invited ? "sent" : "existing_account" };
    },
  },
  {
    group: "operators",
    name: "revoke",
    summary: "Take a person's operator rights away (their account and memberships stay).",
    options: { email: { type: "string" } },
    help: { email: "Their e-mail address (required)" },
    run: async (ctx, input) => {
      const email = required(input, "email");
      const person = await directoryOf(ctx).find(email.trim().toLowerCase());
      if (!person) throw new AppError("invalid_argument", { detail: `No account with the e-mail ${email}` });
      await revokeOperator(ctx, person.userId);
      return { revoked: person.userId };
    },
  },
  {
    group: "members",
    name: "invite",
    summary: "Add a person to an organization with a role (invited by e-mail if they have no account).",
    options: {
      org: { type: "string" },
      email: { type: "string" },
      role: { type: "string" },
      "display-name": { type: "string" },
    },
    help: {
      org: "Organization id (required)",
      email: "Their e-mail address (required)",
      role: "admin | viewer (required)",
      "display-name": "Name shown in the console",
    },
    run: async (ctx, input) => {
      const displayName = optional(input, "display-name");
      const invited = await inviteMember(ctx, directoryOf(ctx), {
        organizationId: required(input, "org"),
        email: required(input, "email"),
        role: roleOption(optional(input, "role")),
        ...(displayName ? { displayName } : {}),
      });
      return { ...invited.member, invitation: invited.invitation };
    },
  },
  {
    group: "members",
    name: "list",
    summary: "List an organization's members and their roles.",
    options: { org: { type: "string" } },
    help: { org: "Organization id (required)" },
    run: (ctx, input) => listMembers(ctx, required(input, "org")),
  },
  {
    group: "members",
    name: "role",
    summary: "Change a member's role (never the last admin's).",
    positionals: ["userId"],
    options: { org: { type: "string" }, role: { type: "string" } },
    help: { org: "Organization id (required)", role: "admin | viewer (required)" },
    run: (ctx, input) =>
      changeMemberRole(ctx, {
        organizationId: required(input, "org"),
        userId: positional(input, 0, "userId"),
        role: roleOption(optional(input, "role")),
      }),
  },
  {
    group: "members",
    name: "remove",
    summary: "Remove a member from an organization (never the last admin).",
    positionals: ["userId"],
    options: { org: { type: "string" } },
    help: { org: "Organization id (required)" },
    run: async (ctx, input) => {
      const userId = positional(input, 0, "userId");
      await removeMember(ctx, { organizationId: required(input, "org"), userId });
      return { removed: userId };
    },
  },
];
