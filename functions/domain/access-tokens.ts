/**
 * Verifies the console's Cognito access tokens with AWS's own `aws-jwt-verify`: the signature
 * against the user pool's published keys (JWKS, fetched once per Lambda instance and on an unknown
 * key id), the issuer, the expiry, `token_use` = `access` and `client_id` = the console client;
 * and here, that the token has an expiry and an issue time that is not ahead of our clock.
 * Nothing here parses or checks a JWT by hand.
 *
 * One code path on AWS and locally: the issuer comes from the environment (on AWS
 * `https://cognito-idp.{region}.amazonaws.com/{poolId}`, locally cognito-local's), the JWKS is at
 * `{issuer}/.well-known/jwks.json` on both, and is fetched with the runtime's `fetch` (the library's
 * own Node fetcher speaks https only, and cognito-local serves http).
 */
import { JwtVerifier } from "aws-jwt-verify";
import {
  FetchError,
  JwksValidationError,
  JwtBaseError,
  JwtExpiredError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtParseError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
  WaitPeriodNotYetEndedJwkError,
} from "aws-jwt-verify/error";
import type { Fetcher } from "aws-jwt-verify/https";
import { SimpleJwksCache } from "aws-jwt-verify/jwk";

export interface AccessTokenSettings {
  /** The user pool's issuer URL. */
  issuer: string;
  /** The console app client: the only client whose tokens are accepted. */
  clientId: string;
}

/** A verified access token's subject: the Cognito user's `sub`. */
export interface VerifiedAccessToken {
  userId: string;
}

/** The token does not verify; `reason` names the check that failed (logged, never answered). */
export class AccessTokenRejected extends Error {
  constructor(readonly reason: string) {
    super(`access token rejected: ${reason}`);
    this.name = "AccessTokenRejected";
  }
}

export interface AccessTokenVerifier {
  /** Resolves with the subject, rejects with AccessTokenRejected, or with anything else when the keys cannot be had. */
  verify(token: string): Promise<VerifiedAccessToken>;
}

export function accessTokenSettingsFromEnvironment(
  env: NodeJS.ProcessEnv = process.env,
): AccessTokenSettings | undefined {
  const issuer = env.COGNITO_ISSUER;
  const clientId = env.COGNITO_CLIENT_ID;
  return issuer && clientId ? { issuer, clientId } : undefined;
}

/** Within the authorizer's own deadline for a verdict (aws-clients.ts), so a silent pool is a 503, not a 500. */
const JWKS_FETCH_TIMEOUT_MS = 2_000;

/** Fetches the JWKS with the runtime's fetch: a time limit, no redirects, 200 only. */
const jwksFetcher: Fetcher = {
  async fetch(uri) {
    let response: Response;
    try {
      response = await fetch(uri, { redirect: "error", signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS) });
    } catch (error) {
      throw new FetchError(uri, error instanceof Error ? error.name : "fetch failed");
    }
    if (response.status !== 200) throw new FetchError(uri, `status ${response.status}`);
    return response.arrayBuffer();
  },
};

/** The failed check, in words that survive minification (for the logs). */
function reasonOf(error: JwtBaseError): string {
  if (error instanceof JwtExpiredError) return "expired";
  if (error instanceof JwtInvalidIssuerError) return "issuer";
  if (error instanceof JwtInvalidSignatureAlgorithmError) return "algorithm";
  if (error instanceof JwtInvalidSignatureError) return "signature";
  if (
    error instanceof JwtWithoutValidKidError ||
    error instanceof KidNotFoundInJwksError ||
    error instanceof WaitPeriodNotYetEndedJwkError
  )
    return "key_id";
  if (error instanceof JwtParseError) return "malformed";
  return "invalid";
}

/** Failures that say nothing about the token: the keys could not be fetched or were unusable. */
const isInfrastructure = (error: unknown): boolean =>
  error instanceof FetchError || error instanceof JwksValidationError;

/** How far a token's issue time may lie ahead of our clock (clocks differ a little). */
export const ISSUED_AT_SKEW_SECONDS = 60;
/** The longest access token a Cognito user pool issues (its validity is 5 minutes to 1 day). */
export const MAX_TOKEN_LIFETIME_SECONDS = 24 * 3_600;

/**
 * What aws-jwt-verify leaves to the caller: it checks `exp` only when a token has one, and never
 * looks at `iat`. A pool always sets both, so a token without them, issued in the future, or
 * living longer than a pool's tokens can, was not made by the pool's own process.
 */
function checkTimes(issuedAt: unknown, expiresAt: unknown, now: number): void {
  if (typeof expiresAt !== "number" || !Number.isFinite(expiresAt))
    throw new AccessTokenRejected("no_expiry");
  if (typeof issuedAt !== "number" || !Number.isFinite(issuedAt))
    throw new AccessTokenRejected("no_issued_at");
  if (issuedAt > now + ISSUED_AT_SKEW_SECONDS) throw new AccessTokenRejected("issued_in_future");
  if (expiresAt - issuedAt > MAX_TOKEN_LIFETIME_SECONDS) throw new AccessTokenRejected("lifetime");
}

export function createAccessTokenVerifier(settings: AccessTokenSettings): AccessTokenVerifier {
  const verifier = JwtVerifier.create(
    {
      issuer: settings.issuer,
      // Cognito access tokens carry no `aud`; the client is in `client_id`, checked below.
      audience: null,
      customJwtCheck: ({ payload }) => {
        checkTimes(payload.iat, payload.exp, Date.now() / 1000);
        if (payload.token_use !== "access") throw new AccessTokenRejected("token_use");
        if (payload.client_id !== settings.clientId) throw new AccessTokenRejected("client_id");
        if (typeof payload.sub !== "string" || payload.sub === "") throw new AccessTokenRejected("sub");
      },
    },
    { jwksCache: new SimpleJwksCache({ fetcher: jwksFetcher }) },
  );
  return {
    async verify(token) {
      try {
        const payload = await verifier.verify(token);
        return { userId: String(payload.sub) };
      } catch (error) {
        if (error instanceof AccessTokenRejected) throw error;
        if (isInfrastructure(error)) throw error;
        if (error instanceof JwtBaseError) throw new AccessTokenRejected(reasonOf(error));
        throw error;
      }
    },
  };
}
