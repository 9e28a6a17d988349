/**
 * Signing in to the console's user pool, with nothing but `fetch`: the few unauthenticated calls of
 * Cognito's own JSON API a browser makes (no SDK, no secret), so the console can use this module as
 * it is. The integration tests sign in through it against cognito-local exactly as the console
 * will against Cognito: USER_PASSWORD_AUTH (the flow both speak), the first-sign-in challenge
 * NEW_PASSWORD_REQUIRED, the authenticator-app code (SOFTWARE_TOKEN_MFA) and enrolling in it,
 * refresh, "forgot password", and signing out (revoking the refresh token).
 *
 * The access token is what `/manage/*` wants: `Authorization: Bearer <accessToken>`.
 */

export interface CognitoClientConfig {
  /** Cognito's endpoint: `https://cognito-idp.{region}.amazonaws.com/` on AWS, cognito-local's locally. */
  endpoint: string;
  /** The console app client's id. */
  clientId: string;
}

export interface Tokens {
  accessToken: string;
  idToken: string;
  /** Absent on a refresh (Cognito keeps the refresh token it was given). */
  refreshToken?: string;
  /** Seconds the access token is valid for. */
  expiresIn?: number;
}

export type SignInResult =
  | { kind: "signed_in"; tokens: Tokens }
  /** First sign-in with a temporary password: choose a new one with `completeNewPassword`. */
  | { kind: "new_password_required"; session: string; username: string }
  /** The person signs in with an authenticator app too: answer with `answerCode`. */
  | { kind: "code_required"; session: string; username: string };

/** Cognito refused: `name` is its exception (NotAuthorizedException, CodeMismatchException, …). */
export class CognitoError extends Error {
  constructor(
    override readonly name: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function call<T>(
  config: CognitoClientConfig,
  action: string,
  body: Record<string, unknown>,
): Promise<T> {
  const response = await fetch(config.endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.1",
      "x-amz-target": `AWSCognitoIdentityProviderService.${action}`,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const parsed = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  if (!response.ok) {
    const type = String(parsed.__type ?? parsed.code ?? "CognitoError");
    throw new CognitoError(type.split("#").pop() ?? type, String(parsed.message ?? text), response.status);
  }
  return parsed as T;
}

interface AuthenticationResult {
  AccessToken: string;
  IdToken: string;
  RefreshToken?: string;
  ExpiresIn?: number;
}

interface AuthResponse {
  AuthenticationResult?: AuthenticationResult;
  ChallengeName?: string;
  Session?: string;
  ChallengeParameters?: Record<string, string>;
}

function tokensOf(result: AuthenticationResult): Tokens {
  return {
    accessToken: result.AccessToken,
    idToken: result.IdToken,
    ...(result.RefreshToken ? { refreshToken: result.RefreshToken } : {}),
    ...(result.ExpiresIn === undefined ? {} : { expiresIn: result.ExpiresIn }),
  };
}

function outcomeOf(response: AuthResponse, username: string): SignInResult {
  if (response.AuthenticationResult)
    return { kind: "signed_in", tokens: tokensOf(response.AuthenticationResult) };
  if (response.ChallengeName === "NEW_PASSWORD_REQUIRED" && response.Session) {
    // The challenge answers with Cognito's own user name for the person (their `sub`).
    return {
      kind: "new_password_required",
      session: response.Session,
      username: response.ChallengeParameters?.USER_ID_FOR_SRP ?? username,
    };
  }
  if (response.ChallengeName === "SOFTWARE_TOKEN_MFA" && response.Session) {
    return {
      kind: "code_required",
      session: response.Session,
      username: response.ChallengeParameters?.USER_ID_FOR_SRP ?? username,
    };
  }
  throw new CognitoError(
    "UnsupportedChallenge",
    `Unsupported sign-in challenge ${response.ChallengeName}`,
    400,
  );
}

export async function signIn(
  config: CognitoClientConfig,
  email: string,
  password: string,
): Promise<SignInResult> {
  const response = await call<AuthResponse>(config, "InitiateAuth", {
    ClientId: config.clientId,
    AuthFlow: "USER_PASSWORD_AUTH",
    AuthParameters: { USERNAME: email, PASSWORD: password },
  });
  return outcomeOf(response, email);
}

/** Answers the first-sign-in challenge with the person's own new password. */
export async function completeNewPassword(
  config: CognitoClientConfig,
  challenge: { session: string; username: string; newPassword: string },
): Promise<Tokens> {
  const response = await call<AuthResponse>(config, "RespondToAuthChallenge", {
    ClientId: config.clientId,
    ChallengeName: "NEW_PASSWORD_REQUIRED",
    Session: challenge.session,
    ChallengeResponses: { USERNAME: challenge.username, NEW_PASSWORD: challenge.newPassword },
  });
  const outcome = outcomeOf(response, challenge.username);
  if (outcome.kind !== "signed_in")
    throw new CognitoError("UnsupportedChallenge", "Another challenge followed", 400);
  return outcome.tokens;
}

/** Answers the authenticator-app challenge with the app's current six-digit code. */
export async function answerCode(
  config: CognitoClientConfig,
  challenge: { session: string; username: string; code: string },
): Promise<Tokens> {
  const response = await call<AuthResponse>(config, "RespondToAuthChallenge", {
    ClientId: config.clientId,
    ChallengeName: "SOFTWARE_TOKEN_MFA",
    Session: challenge.session,
    ChallengeResponses: { USERNAME: challenge.username, SOFTWARE_TOKEN_MFA_CODE: challenge.code },
  });
  const outcome = outcomeOf(response, challenge.username);
  if (outcome.kind !== "signed_in")
    throw new CognitoError("UnsupportedChallenge", "Another challenge followed", 400);
  return outcome.tokens;
}

/** Whether the signed-in person signs in with an authenticator app (GetUser). */
export async function usesAuthenticator(config: CognitoClientConfig, accessToken: string): Promise<boolean> {
  const user = await call<{ UserMFASettingList?: string[] }>(config, "GetUser", { AccessToken: accessToken });
  return (user.UserMFASettingList ?? []).includes("SOFTWARE_TOKEN_MFA");
}

/**
 * Starts enrolling the signed-in person in an authenticator app: a new secret (base32) for the app,
 * and the `otpauth://` address apps read. Nothing changes until `finishAuthenticator` checks a code.
 */
export async function startAuthenticator(
  config: CognitoClientConfig,
  accessToken: string,
  account: { email: string; issuer: string },
): Promise<{ secret: string; uri: string }> {
  const { SecretCode: secret } = await call<{ SecretCode: string }>(config, "AssociateSoftwareToken", {
    AccessToken: accessToken,
  });
  const label = encodeURIComponent(`${account.issuer}:${account.email}`);
  const uri = `otpauth://totp/${label}?secret=${secret}&issuer=${encodeURIComponent(account.issuer)}`;
  return { secret, uri };
}

/** Checks the app's first code and turns the second step on for every later sign-in. */
export async function finishAuthenticator(
  config: CognitoClientConfig,
  accessToken: string,
  code: string,
): Promise<void> {
  await call(config, "VerifySoftwareToken", {
    AccessToken: accessToken,
    UserCode: code,
    FriendlyDeviceName: "Authenticator app",
  });
  await call(config, "SetUserMFAPreference", {
    AccessToken: accessToken,
    SoftwareTokenMfaSettings: { Enabled: true, PreferredMfa: true },
  });
}

/** Turns the authenticator-app step off for the signed-in person. */
export async function stopAuthenticator(config: CognitoClientConfig, accessToken: string): Promise<void> {
  await call(config, "SetUserMFAPreference", {
    AccessToken: accessToken,
    SoftwareTokenMfaSettings: { Enabled: false, PreferredMfa: false },
  });
}

/** New access and id tokens from a refresh token. */
export async function refresh(config: CognitoClientConfig, refreshToken: string): Promise<Tokens> {
  const response = await call<AuthResponse>(config, "InitiateAuth", {
    ClientId: config.clientId,
    AuthFlow: "REFRESH_TOKEN_AUTH",
    AuthParameters: { REFRESH_TOKEN: refreshToken },
  });
  const outcome = outcomeOf(response, "");
  if (outcome.kind !== "signed_in")
    throw new CognitoError("UnsupportedChallenge", "Refresh needs a challenge", 400);
  return { ...outcome.tokens, refreshToken: outcome.tokens.refreshToken ?? refreshToken };
}

/** Sends a reset code to the person's e-mail (Cognito answers the same for an unknown address). */
export async function forgotPassword(config: CognitoClientConfig, email: string): Promise<void> {
  await call(config, "ForgotPassword", { ClientId: config.clientId, Username: email });
}

export async function confirmForgotPassword(
  config: CognitoClientConfig,
  reset: { email: string; code: string; newPassword: string },
): Promise<void> {
  await call(config, "ConfirmForgotPassword", {
    ClientId: config.clientId,
    Username: reset.email,
    ConfirmationCode: reset.code,
    Password: reset.newPassword,
  });
}

/**
 * Signs out: revokes the refresh token (and, on Cognito, the access tokens issued with it for
 * Cognito's own APIs). Access tokens already handed out stay valid for the service until they
 * expire (at most 60 minutes): it verifies them by signature, without asking Cognito.
 */
export async function revokeRefreshToken(config: CognitoClientConfig, refreshToken: string): Promise<void> {
  await call(config, "RevokeToken", { ClientId: config.clientId, Token: refreshToken });
}
