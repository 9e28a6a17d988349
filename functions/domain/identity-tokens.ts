/**
 * Identity tokens: a JWT the business's own server signs for a signed-in customer, with the widget's
 * identity secret, so the widget can say who the visitor is without the browser being able to lie.
 *
 * Verified with `jose` (no JWT code of ours): HS256 only (`alg: none`, RS256 or anything else is
 * refused before any signature is checked), `sub` and `exp` required, `exp` in the past by more than
 * a minute refused, and so is an `exp` more than 24 hours ahead (a token must not outlive a session
 * by days), `nbf` honoured with the same minute of skew. `name`, `email` and `phone` are optional
 * strings that update the contact. Each secret that may verify is tried in turn (the current one,
 * then those rotated out less than 24 hours ago).
 */
import { errors, jwtVerify } from "jose";

export const identityTokenLimits = {
  /** Clock skew tolerated on `exp` and `nbf`. */
  clockSkewSeconds: 60,
  /** How far ahead `exp` may be. */
  maxLifetimeSeconds: 24 * 60 * 60,
  tokenLength: 4_096,
  subjectLength: 255,
  nameLength: 255,
  emailLength: 320,
  phoneLength: 64,
} as const;

export interface VerifiedIdentity {
  subject: string;
  name?: string;
  email?: string;
  phone?: string;
}

/** Why a token was refused: for the logs only (the client always hears "Invalid identity token"). */
export type IdentityRefusal =
  | "malformed"
  | "algorithm"
  | "signature"
  | "expired"
  | "too_long_lived"
  | "claims";

export type IdentityVerdict = { verified: VerifiedIdentity } | { refused: IdentityRefusal };

const text = (value: unknown, max: number): string | undefined =>
  typeof value === "string" && value.length > 0 && value.length <= max ? value : undefined;

/** Verifies `token` against each secret in turn; `nowMs` is the verifier's clock. */
export async function verifyIdentityToken(
  token: string,
  secrets: readonly string[],
  nowMs: number,
): Promise<IdentityVerdict> {
  if (token.length > identityTokenLimits.tokenLength || token.split(".").length !== 3)
    return { refused: "malformed" };
  for (const secret of secrets) {
    try {
      const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
        algorithms: ["HS256"],
        requiredClaims: ["sub", "exp"],
        clockTolerance: identityTokenLimits.clockSkewSeconds,
        currentDate: new Date(nowMs),
      });
      const nowSeconds = Math.floor(nowMs / 1000);
      if (
        typeof payload.exp !== "number" ||
        payload.exp >
          nowSeconds + identityTokenLimits.maxLifetimeSeconds + identityTokenLimits.clockSkewSeconds
      )
        return { refused: "too_long_lived" };
      const subject = text(payload.sub, identityTokenLimits.subjectLength);
      if (!subject) return { refused: "claims" };
      const name = text(payload.name, identityTokenLimits.nameLength);
      const email = text(payload.email, identityTokenLimits.emailLength);
      const phone = text(payload.phone, identityTokenLimits.phoneLength);
      return {
        verified: {
          subject,
          ...(name ? { name } : {}),
          ...(email ? { email } : {}),
          ...(phone ? { phone } : {}),
        },
      };
    } catch (error) {
      // A signature that fails may verify with the next secret; anything else fails with every one.
      if (error instanceof errors.JWSSignatureVerificationFailed) continue;
      if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
        return { refused: "algorithm" };
      if (error instanceof errors.JWTExpired) return { refused: "expired" };
      if (error instanceof errors.JWTClaimValidationFailed) return { refused: "claims" };
      return { refused: "malformed" };
    }
  }
  return { refused: "signature" };
}
