/**
 * Who may sign in, defined once: the CDK stack deploys this user pool and console client to
 * Amazon Cognito, and the local runtime creates the same pool and client in cognito-local through
 * Cognito's own API (lib/local/cognito-local.ts). Pure data, no CDK imports.
 *
 * Sign-in is USER_PASSWORD_AUTH (the e-mail address and password sent to Cognito over TLS),
 * because it is the one flow both Cognito and cognito-local speak, so the console and the tests
 * run one code path everywhere (lib/sign-in.ts). Refresh tokens renew a session.
 */

export const identity = {
  /** Suffixed with the stage on AWS. */
  userPoolName: "chatbot-api-people",
  /** People sign in with their e-mail address; Cognito's user name is then the `sub`. */
  usernameAttributes: ["email"] as const,
  autoVerifiedAttributes: ["email"] as const,
  passwordPolicy: {
    minimumLength: 12,
    requireLowercase: true,
    requireUppercase: true,
    requireDigits: true,
    requireSymbols: true,
    temporaryPasswordValidityDays: 7,
  },
  /** Invitations: Cognito e-mails the temporary password; `{username}` and `{####}` are its placeholders. */
  invitation: {
    subject: "You are invited to the chatbot console",
    body:
      "You were invited to manage chatbots in the chatbot console. Sign in with your e-mail address {username} " +
      "and this temporary password: {####} (you choose your own password at the first sign-in).",
  },
  consoleClient: {
    name: "console",
    /** A browser cannot keep a secret. */
    generateSecret: false,
    authFlows: ["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"] as const,
    accessTokenValidityMinutes: 60,
    idTokenValidityMinutes: 60,
    refreshTokenValidityDays: 30,
    /** Cognito answers an unknown e-mail like a known one (no account enumeration through sign-in or reset). */
    preventUserExistenceErrors: true,
  },
} as const;

/** The access token's issuer: `https://cognito-idp.{region}.amazonaws.com/{poolId}` on AWS. */
export function cognitoIssuer(region: string, userPoolId: string): string {
  return `https://cognito-idp.${region}.amazonaws.com/${userPoolId}`;
}
