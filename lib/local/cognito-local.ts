/**
 * The local stand-in for Amazon Cognito: cognito-local (npm), run as its own process like DynamoDB
 * Local. It speaks Cognito's own JSON API (the AWS SDK and the console's sign-in code talk to it
 * unchanged) and serves the user pool's JWKS at `/{poolId}/.well-known/jwks.json`, so the
 * management authorizer verifies its tokens with the same code as on AWS.
 *
 * - The user pool and console client are created through that API from lib/identity.ts, the
 *   definition the stack deploys (kept across runs with a data directory).
 * - cognito-local prints invitations and password-reset codes to its console instead of e-mailing
 *   them; they also land in a mailbox file (one JSON line per message, written by the process as
 *   it "sends" them), the local counterpart of e-mail that tests and developers read.
 * - Supervised: if the process dies, it is started again on the same port and data, so issued
 *   tokens stay valid (the issuer URL names the port).
 */

import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import {
  CognitoIdentityProviderClient,
  CreateUserPoolClientCommand,
  CreateUserPoolCommand,
  ListUserPoolClientsCommand,
  ListUserPoolsCommand,
  SetUserPoolMfaConfigCommand,
} from "@aws-sdk/client-cognito-identity-provider";
import { identity } from "../identity.ts";
import { freePort, localCredentials, localRegion } from "./dynamodb-local.ts";
import { graceForInterrupt } from "./interrupts.ts";

export interface RunningCognito {
  /** Cognito's API endpoint (the SDK's and the sign-in code's). */
  endpoint: string;
  userPoolId: string;
  clientId: string;
  /** The access tokens' `iss`. */
  issuer: string;
  /** Where invitations and reset codes land (JSON lines). */
  mailboxFile: string;
  client: CognitoIdentityProviderClient;
  /** Stops watching it (shutdown begins): an exit from now on is not restarted. */
  stopSupervising(): void;
  stop(): Promise<void>;
}

/** One captured message: what Cognito would have e-mailed. */
export interface MailboxMessage {
  at: string;
  /** `invitation` (temporary password) or `password_reset` (code), or the API action that sent it. */
  kind: string;
  to: string;
  code: string;
  /** Cognito's user name (the `sub` in a pool signing in by e-mail). */
  username: string;
}

/** Runs cognito-local's server, writing what it "sends" to the mailbox (see the script's comment). */
const processScript = resolve(import.meta.dirname, "cognito-local-process.mjs");

async function healthy(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1_000) });
    return response.ok;
  } catch {
    return false;
  }
}

export async function startCognitoLocal(options: {
  /** Keep the pool and its people here between runs; absent: a temporary folder. */
  dataDirectory?: string;
  mailboxFile: string;
  port?: number;
  selfSignUp?: boolean;
}): Promise<RunningCognito> {
  const port = options.port ?? (await freePort());
  const host = "127.0.0.1";
  const endpoint = `http://${host}:${port}`;
  // cognito-local keeps its data in `.cognito/` under its working directory.
  const workDirectory = options.dataDirectory ?? mkdtempSync(join(tmpdir(), "cognito-local-"));
  mkdirSync(workDirectory, { recursive: true });
  mkdirSync(dirname(options.mailboxFile), { recursive: true });
  appendFileSync(options.mailboxFile, "", { mode: 0o600 });

  let child: ChildProcess | undefined;
  let stopping = false;
  let output = "";
  const restarts: number[] = [];

  const launch = (): ChildProcess => {
    const started = spawn(process.execPath, [processScript], {
      cwd: workDirectory,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: host,
        NODE_NO_WARNINGS: "1",
        MAILBOX_FILE: options.mailboxFile,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    started.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      output = (output + chunk).slice(-20_000);
    });
    started.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      output = (output + chunk).slice(-20_000);
    });
    started.once("exit", async (code, signal) => {
      if (stopping) return;
      // Ended by the terminal's Ctrl-C (sent to the whole group): the runtime's shutdown is coming.
      await graceForInterrupt(code, signal);
      if (stopping) return;
      // Supervision: start it again on the same port and data, unless it keeps dying.
      const now = Date.now();
      restarts.push(now);
      while (restarts.length > 0 && (restarts[0] ?? now) < now - 60_000) restarts.shift();
      if (restarts.length > 5) {
        console.error(
          `[cognito-local] exited (${code ?? signal}) too often; not restarting. Its output:\n${output}`,
        );
        return;
      }
      console.error(`[cognito-local] exited (${code ?? signal}); starting it again`);
      setTimeout(() => {
        if (!stopping) child = launch();
      }, 300);
    });
    return started;
  };

  child = launch();
  const deadline = Date.now() + 30_000;
  while (!(await healthy(endpoint))) {
    if (Date.now() > deadline) {
      stopping = true;
      child?.kill("SIGKILL");
      throw new Error(`cognito-local did not start. Its output:\n${output.trim() || "(none)"}`);
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 150));
  }

  const client = new CognitoIdentityProviderClient({
    endpoint,
    region: localRegion,
    credentials: localCredentials,
  });
  try {
    const { userPoolId, clientId } = await ensureIdentity(client, options.selfSignUp === true);
    return {
      endpoint,
      userPoolId,
      clientId,
      issuer: `${endpoint}/${userPoolId}`,
      mailboxFile: options.mailboxFile,
      client,
      stopSupervising: () => {
        stopping = true;
      },
      stop: async () => {
        stopping = true;
        client.destroy();
        const running = child;
        if (running && running.exitCode === null && running.signalCode === null) {
          const exited = new Promise((resolveExit) => running.once("exit", resolveExit));
          running.kill("SIGTERM");
          const timer = setTimeout(() => running.kill("SIGKILL"), 5_000);
          await exited;
          clearTimeout(timer);
        }
        if (!options.dataDirectory) rmSync(workDirectory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    stopping = true;
    child?.kill("SIGKILL");
    throw error;
  }
}

/** The pool and console client of lib/identity.ts: found by name, or created. */
export async function ensureIdentity(
  client: CognitoIdentityProviderClient,
  selfSignUp: boolean,
): Promise<{ userPoolId: string; clientId: string }> {
  const pools = await client.send(new ListUserPoolsCommand({ MaxResults: 60 }));
  let userPoolId = pools.UserPools?.find((pool) => pool.Name === identity.userPoolName)?.Id;
  if (!userPoolId) {
    const created = await client.send(
      new CreateUserPoolCommand({
        PoolName: identity.userPoolName,
        UsernameAttributes: [...identity.usernameAttributes],
        AutoVerifiedAttributes: [...identity.autoVerifiedAttributes],
        UsernameConfiguration: { CaseSensitive: false },
        Policies: {
          PasswordPolicy: {
            MinimumLength: identity.passwordPolicy.minimumLength,
            RequireLowercase: identity.passwordPolicy.requireLowercase,
            RequireUppercase: identity.passwordPolicy.requireUppercase,
            RequireNumbers: identity.passwordPolicy.requireDigits,
            RequireSymbols: identity.passwordPolicy.requireSymbols,
            TemporaryPasswordValidityDays: identity.passwordPolicy.temporaryPasswordValidityDays,
          },
        },
        AdminCreateUserConfig: {
          AllowAdminCreateUserOnly: !selfSignUp,
          InviteMessageTemplate: {
            EmailSubject: identity.invitation.subject,
            EmailMessage: identity.invitation.body,
          },
        },
        AccountRecoverySetting: { RecoveryMechanisms: [{ Name: "verified_email", Priority: 1 }] },
      }),
    );
    userPoolId = created.UserPool?.Id;
  }
  if (!userPoolId) throw new Error("cognito-local returned no user pool id");
  // As a stage deployed with -c consoleMfa=optional: a person may add an authenticator app, and is
  // then asked for its code at sign-in (set on every start, so older local pools get it too).
  await client.send(
    new SetUserPoolMfaConfigCommand({
      UserPoolId: userPoolId,
      MfaConfiguration: "OPTIONAL",
      SoftwareTokenMfaConfiguration: { Enabled: true },
    }),
  );
  const clients = await client.send(
    new ListUserPoolClientsCommand({ UserPoolId: userPoolId, MaxResults: 60 }),
  );
  let clientId = clients.UserPoolClients?.find(
    (found) => found.ClientName === identity.consoleClient.name,
  )?.ClientId;
  if (!clientId) {
    const created = await client.send(
      new CreateUserPoolClientCommand({
        UserPoolId: userPoolId,
        ClientName: identity.consoleClient.name,
        GenerateSecret: identity.consoleClient.generateSecret,
        ExplicitAuthFlows: [...identity.consoleClient.authFlows],
        AccessTokenValidity: identity.consoleClient.accessTokenValidityMinutes,
        IdTokenValidity: identity.consoleClient.idTokenValidityMinutes,
        RefreshTokenValidity: identity.consoleClient.refreshTokenValidityDays,
        TokenValidityUnits: { AccessToken: "minutes", IdToken: "minutes", RefreshToken: "days" },
        PreventUserExistenceErrors: identity.consoleClient.preventUserExistenceErrors ? "ENABLED" : "LEGACY",
      }),
    );
    clientId = created.UserPoolClient?.ClientId;
  }
  if (!clientId) throw new Error("cognito-local returned no client id");
  return { userPoolId, clientId };
}
