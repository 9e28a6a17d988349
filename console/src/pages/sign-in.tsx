/**
 * Sign in, the first sign-in's new password, the authenticator app's code, and "forgot password":
 * Cognito's own flows, with fetch.
 */
import { signal } from "@preact/signals";
import { useState } from "preact/hooks";
import {
  answerCode,
  CognitoError,
  completeNewPassword,
  confirmForgotPassword,
  forgotPassword,
  signIn,
} from "../../../lib/sign-in.ts";
import { navigate, queryParam } from "../lib/router.ts";
import { cognito, startSession } from "../lib/session.ts";
import { formValues, PageHeader, SubmitButton, SuccessNotice, useAction } from "../ui/kit.tsx";
import { Link, Logo } from "../ui/nav.tsx";

/** The first sign-in's challenge, between the two pages. */
const challenge = signal<{ session: string; username: string; email: string } | null>(null);
/** The authenticator-app challenge, between the sign-in page and the code page. */
const codeChallenge = signal<{ session: string; username: string; email: string } | null>(null);
/** A note for the sign-in page (after a password reset). */
const notice = signal<string | null>(null);

const PASSWORD_RULES =
  "At least 12 characters, with a lower-case and an upper-case letter, a digit and a symbol.";

/**
 * Cognito's refusals in words for people. Signing in, a wrong password is NotAuthorizedException
 * on Cognito (cognito-local answers InvalidPasswordException); choosing one, that means the rules.
 */
function explain(error: unknown, flow: "sign-in" | "new-password" | "code" = "new-password"): Error {
  if (!(error instanceof CognitoError)) {
    return error instanceof Error
      ? new Error(`Cognito could not be reached: ${error.message}`)
      : new Error(String(error));
  }
  if (flow === "sign-in" && error.name === "InvalidPasswordException") {
    return new Error("That e-mail address and password do not match an account.");
  }
  if (flow === "code" && error.name === "CodeMismatchException") {
    return new Error("That code is not right. Enter the code your authenticator app shows now.");
  }
  if (flow === "code" && error.name === "NotAuthorizedException") {
    return new Error("This sign-in has expired. Sign in again.");
  }
  switch (error.name) {
    case "NotAuthorizedException":
      return new Error(
        /expired|revoked/i.test(error.message)
          ? error.message
          : "That e-mail address and password do not match an account.",
      );
    case "UserNotFoundException":
      return new Error("That e-mail address and password do not match an account.");
    case "InvalidPasswordException":
      return new Error(`The password does not meet the rules: ${PASSWORD_RULES}`);
    case "CodeMismatchException":
      return new Error("That code is not right. Check the e-mail and try again.");
    case "ExpiredCodeException":
      return new Error("That code has expired. Ask for a new one.");
    case "LimitExceededException":
    case "TooManyRequestsException":
      return new Error("Too many attempts. Wait a few minutes and try again.");
    default:
      return new Error(error.message || error.name);
  }
}

function AuthCard({ title, children }: { title: string; children: preact.ComponentChildren }) {
  return (
    <main class="auth-page">
      <article>
        <div class="brand" style="color:#0f172a;margin-bottom:1rem">
          <Logo /> Chatbot console
        </div>
        <PageHeader title={title} />
        {children}
      </article>
    </main>
  );
}

function Problem({ error }: { error: unknown }) {
  if (error === null) return null;
  return (
    <p role="alert" class="notice error">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}

const afterSignIn = () => {
  const next = queryParam("next");
  navigate(next?.startsWith("/") && !next.startsWith("//") ? next : "/", { replace: true });
};

export function SignInPage() {
  const action = useAction();
  const note = notice.value;
  return (
    <AuthCard title="Sign in">
      {note && <SuccessNotice>{note}</SuccessNotice>}
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const { email = "", password = "" } = formValues(event.currentTarget);
          await action.run(async () => {
            const result = await signIn(cognito(), email.trim(), password).catch((error: unknown) => {
              throw explain(error, "sign-in");
            });
            notice.value = null;
            if (result.kind === "new_password_required") {
              challenge.value = { session: result.session, username: result.username, email: email.trim() };
              navigate(`/new-password${location.search}`);
              return;
            }
            if (result.kind === "code_required") {
              codeChallenge.value = {
                session: result.session,
                username: result.username,
                email: email.trim(),
              };
              navigate(`/sign-in-code${location.search}`);
              return;
            }
            startSession(result.tokens, email.trim());
            afterSignIn();
          });
        }}
      >
        <label>
          E-mail address
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <Problem error={action.error} />
        <SubmitButton action={action}>Sign in</SubmitButton>
      </form>
      <p>
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
    </AuthCard>
  );
}

/** The second step for a person who signs in with an authenticator app too. */
export function SignInCodePage() {
  const action = useAction();
  const pending = codeChallenge.value;
  if (!pending) {
    return (
      <AuthCard title="Authenticator code">
        <p>
          Sign in with your e-mail address and password first. <Link href="/sign-in">Sign in</Link>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Authenticator code">
      <p>Enter the 6-digit code your authenticator app shows for {pending.email}.</p>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const { code = "" } = formValues(event.currentTarget);
          await action.run(async () => {
            const tokens = await answerCode(cognito(), {
              session: pending.session,
              username: pending.username,
              code: code.replace(/\s/g, ""),
            }).catch((error: unknown) => {
              throw explain(error, "code");
            });
            codeChallenge.value = null;
            startSession(tokens, pending.email);
            afterSignIn();
          });
        }}
      >
        <label>
          Code
          <input
            name="code"
            inputMode="numeric"
            autocomplete="one-time-code"
            pattern="[0-9 ]{6,7}"
            maxLength={7}
            required
          />
        </label>
        <Problem error={action.error} />
        <SubmitButton action={action}>Sign in</SubmitButton>
      </form>
    </AuthCard>
  );
}

export function NewPasswordPage() {
  const action = useAction();
  const pending = challenge.value;
  if (!pending) {
    return (
      <AuthCard title="Choose a new password">
        <p>
          Sign in with the temporary password from your invitation first. <Link href="/sign-in">Sign in</Link>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Choose a new password">
      <p>Welcome! This is your first sign-in: choose your own password for {pending.email}.</p>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const { password = "", repeat = "" } = formValues(event.currentTarget);
          await action.run(async () => {
            if (password !== repeat) throw new Error("The two passwords differ.");
            const tokens = await completeNewPassword(cognito(), {
              session: pending.session,
              username: pending.username,
              newPassword: password,
            }).catch((error: unknown) => {
              throw explain(error);
            });
            challenge.value = null;
            startSession(tokens, pending.email);
            afterSignIn();
          });
        }}
      >
        <label for="new-password">New password</label>
        <input
          id="new-password"
          name="password"
          type="password"
          autocomplete="new-password"
          minLength={12}
          required
          aria-describedby="password-rules"
        />
        <small id="password-rules">{PASSWORD_RULES}</small>
        <label>
          New password again
          <input name="repeat" type="password" autocomplete="new-password" minLength={12} required />
        </label>
        <Problem error={action.error} />
        <SubmitButton action={action}>Set password and sign in</SubmitButton>
      </form>
    </AuthCard>
  );
}

export function ForgotPasswordPage() {
  const action = useAction();
  const [email, setEmail] = useState<string | null>(null);
  if (email === null) {
    return (
      <AuthCard title="Reset your password">
        <p>We will e-mail you a code to choose a new password.</p>
        <form
          onSubmit={async (event) => {
            event.preventDefault();
            const values = formValues(event.currentTarget);
            const address = (values.email ?? "").trim();
            await action.run(async () => {
              await forgotPassword(cognito(), address).catch((error: unknown) => {
                throw explain(error);
              });
              setEmail(address);
            });
          }}
        >
          <label>
            E-mail address
            <input name="email" type="email" autocomplete="username" required />
          </label>
          <Problem error={action.error} />
          <SubmitButton action={action}>Send the code</SubmitButton>
        </form>
        <p>
          <Link href="/sign-in">Back to sign in</Link>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Reset your password">
      <p role="status">If {email} has an account, a code is on its way. Enter it with your new password.</p>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const { code = "", password = "" } = formValues(event.currentTarget);
          await action.run(async () => {
            await confirmForgotPassword(cognito(), { email, code: code.trim(), newPassword: password }).catch(
              (error: unknown) => {
                throw explain(error);
              },
            );
            notice.value = "Your password has been changed. Sign in with it now.";
            navigate("/sign-in", { replace: true });
          });
        }}
      >
        <label>
          Code from the e-mail
          <input name="code" inputMode="numeric" autocomplete="one-time-code" required />
        </label>
        <label for="reset-password">New password</label>
        <input
          id="reset-password"
          name="password"
          type="password"
          autocomplete="new-password"
          minLength={12}
          required
          aria-describedby="reset-rules"
        />
        <small id="reset-rules">{PASSWORD_RULES}</small>
        <Problem error={action.error} />
        <SubmitButton action={action}>Change password</SubmitButton>
      </form>
    </AuthCard>
  );
}
