/**
 * cognito-local's server, run by lib/local/cognito-local.ts as its own process (PORT and HOST set,
 * the data folder as working directory), with two changes to how it starts:
 *
 * - Every message it would send (an invitation's temporary password, a reset code) is also
 *   appended to the mailbox file (MAILBOX_FILE) as one JSON line, the moment it is "sent". Its
 *   own way, a box printed to the console, reaches a reader only whenever the console output
 *   happens to be flushed, which can be seconds later.
 * - It logs JSON lines (no colours, no boxes to parse).
 */
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const mailbox = process.env.MAILBOX_FILE;
const kinds = { AdminCreateUser: "invitation", ForgotPassword: "password_reset" };

const {
  ConsoleMessageSender,
} = require("cognito-local/lib/services/messageDelivery/consoleMessageSender.js");
const sendToConsole = ConsoleMessageSender.prototype.sendToConsole;
ConsoleMessageSender.prototype.sendToConsole = function (ctx, user, destination, message) {
  if (mailbox) {
    const target = ctx.logger?.bindings?.().target ?? "unknown";
    const entry = {
      at: new Date().toISOString(),
      kind: kinds[target] ?? target,
      to: destination,
      code: message.__code,
      username: user.Username,
    };
    appendFileSync(mailbox, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  }
  return sendToConsole.call(this, ctx, user, destination, message);
};

const cognitoLocal = require("cognito-local");
// The logger library cognito-local itself depends on, as it resolves it.
const pino = createRequire(require.resolve("cognito-local/package.json"))("pino");

const logger = pino({ level: "info", base: null }, pino.destination({ dest: 1, sync: true }));
const server = await cognitoLocal.createDefaultServer(logger);
const listening = await server.start();
const address = listening.address();
logger.info(
  { started: true },
  `cognito-local running on ${typeof address === "string" ? address : address?.port}`,
);
