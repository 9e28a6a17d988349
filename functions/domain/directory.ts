/**
 * The people directory: the user pool. Inviting someone creates their Cognito user (Cognito
 * e-mails the temporary password; the first sign-in must choose a new one); someone who already
 * has an account (a member of another organization) is found by e-mail instead. The table never
 * holds passwords; it keys people by the `sub` Cognito gives them.
 *
 * The client reads `AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER` itself, which is how the local
 * runtime points it at cognito-local.
 */

import {
  AdminCreateUserCommand,
  AdminGetUserCommand,
  type AttributeType,
  CognitoIdentityProviderClient,
  UserNotFoundException,
  UsernameExistsException,
} from "@aws-sdk/client-cognito-identity-provider";
import { awsClientOptions, isDependencyFailure } from "#functions/aws-clients";
import { serviceUnavailable } from "#functions/errors";

export interface DirectoryUser {
  userId: string;
  email: string;
}

export interface PeopleDirectory {
  /** Creates the account and sends the invitation, or finds the existing account (`invited: false`). */
  invite(email: string): Promise<DirectoryUser & { invited: boolean }>;
  /** The account with this e-mail, if any. */
  find(email: string): Promise<DirectoryUser | undefined>;
}

const attribute = (attributes: AttributeType[] | undefined, name: string): string | undefined =>
  attributes?.find((entry) => entry.Name === name)?.Value;

/** A user pool that does not answer (in time) is a 503 the caller may retry, as the table is. */
function unavailableOr(error: unknown): unknown {
  return isDependencyFailure(error) ? serviceUnavailable(error) : error;
}

export function createCognitoDirectory(
  userPoolId: string,
  client = new CognitoIdentityProviderClient(awsClientOptions("request")),
): PeopleDirectory {
  const find = async (email: string): Promise<DirectoryUser | undefined> => {
    try {
      const found = await client.send(new AdminGetUserCommand({ UserPoolId: userPoolId, Username: email }));
      const userId = attribute(found.UserAttributes, "sub");
      return userId ? { userId, email: attribute(found.UserAttributes, "email") ?? email } : undefined;
    } catch (error) {
      if (error instanceof UserNotFoundException) return undefined;
      throw unavailableOr(error);
    }
  };
  return {
    find,
    async invite(email) {
      try {
        const created = await client.send(
          new AdminCreateUserCommand({
            UserPoolId: userPoolId,
            Username: email,
            UserAttributes: [
              { Name: "email", Value: email },
              // The admin typed it; the person proves it by signing in with the password sent there.
              { Name: "email_verified", Value: "true" },
            ],
            DesiredDeliveryMediums: ["EMAIL"],
          }),
        );
        const userId = attribute(created.User?.Attributes, "sub");
        if (!userId) throw new Error("the user pool returned a user without sub");
        return { userId, email, invited: true };
      } catch (error) {
        if (!(error instanceof UsernameExistsException)) throw unavailableOr(error);
        const existing = await find(email);
        if (!existing) throw error;
        return { ...existing, invited: false };
      }
    },
  };
}

let fromEnvironment: PeopleDirectory | undefined;

/** The stage's user pool, named by the stack through `COGNITO_USER_POOL_ID`. */
export function directoryFromEnvironment(): PeopleDirectory {
  if (!fromEnvironment) {
    const userPoolId = process.env.COGNITO_USER_POOL_ID;
    if (!userPoolId) throw new Error("COGNITO_USER_POOL_ID is not set");
    fromEnvironment = createCognitoDirectory(userPoolId);
  }
  return fromEnvironment;
}
