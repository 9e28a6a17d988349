/**
 * Who is signed in. The access token lives in memory only; the refresh token in sessionStorage, so
 * a reload keeps the person signed in while a closed tab forgets them. (sessionStorage is readable
 * by script on the page: the strict Content-Security-Policy, with no inline or foreign script, is
 * what guards it. An httpOnly cookie would need a server of our own in front of Cognito.)
 * The access token is renewed a minute before it expires; signing out revokes the refresh token.
 */
import { computed, signal } from "@preact/signals";
import { type CognitoClientConfig, refresh, revokeRefreshToken, type Tokens } from "../../../lib/sign-in.ts";
import { config } from "../config.ts";

const REFRESH_KEY = "console.refreshToken";
const EMAIL_KEY = "console.email";

interface Session {
  accessToken: string;
  /** Epoch ms. */
  expiresAt: number;
  email: string;
}

export const session = signal<Session | null>(null);
export const signedIn = computed(() => session.value !== null);

export const cognito = (): CognitoClientConfig => ({
  endpoint: config().cognito.endpoint,
  clientId: config().cognito.clientId,
});

export function startSession(tokens: Tokens, email: string): void {
  if (tokens.refreshToken) sessionStorage.setItem(REFRESH_KEY, tokens.refreshToken);
  sessionStorage.setItem(EMAIL_KEY, email);
  session.value = {
    accessToken: tokens.accessToken,
    expiresAt: Date.now() + (tokens.expiresIn ?? 3600) * 1000,
    email,
  };
}

let renewing: Promise<string | null> | undefined;

/** A session from the tab's refresh token (after a reload), or null. */
async function renew(): Promise<string | null> {
  const refreshToken = sessionStorage.getItem(REFRESH_KEY);
  if (!refreshToken) return null;
  try {
    const tokens = await refresh(cognito(), refreshToken);
    startSession(tokens, sessionStorage.getItem(EMAIL_KEY) ?? "");
    return tokens.accessToken;
  } catch {
    forget();
    return null;
  }
}

/** A valid access token, renewed first when it is about to expire; null when signed out. */
export async function accessToken(): Promise<string | null> {
  const current = session.value;
  if (current && current.expiresAt - Date.now() > 60_000) return current.accessToken;
  renewing ??= renew().finally(() => {
    renewing = undefined;
  });
  return renewing;
}

/** Restores the session of this tab, if any. */
export const resumeSession = (): Promise<string | null> => accessToken();

function forget(): void {
  sessionStorage.removeItem(REFRESH_KEY);
  session.value = null;
}

export async function signOut(): Promise<void> {
  const refreshToken = sessionStorage.getItem(REFRESH_KEY);
  forget();
  if (refreshToken) await revokeRefreshToken(cognito(), refreshToken).catch(() => undefined);
}

/** The service refused the token (expired, revoked): back to the sign-in page. */
export function sessionExpired(): void {
  forget();
}
