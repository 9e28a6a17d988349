/**
 * The commands people paste, run as written against the local runtime: every shell block of the
 * README (each either runs here or is named below with why it cannot), and the ready-to-paste
 * commands `npm start` prints. They run in bash from a folder whose `.local/demo.json` is this
 * runtime's demo file (the README's blocks read it as they would in a clone), and must exit 0,
 * answer no error, and hold no placeholder for the reader to fill in.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { environment, isLocal } from "#test/support/harness";

const run = promisify(execFile);
const readme = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");

interface Block {
  line: number;
  text: string;
}

/** The README's ```sh blocks (indented ones too, dedented), with the line each starts on. */
function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  for (const match of markdown.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)) {
    const indent = match[1] ?? "";
    const body = (match[2] ?? "")
      .split("\n")
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join("\n");
    blocks.push({ line: markdown.slice(0, match.index).split("\n").length, text: body.trimEnd() });
  }
  return blocks;
}

/** Blocks that cannot run here, by how they start, and why. */
const notRunHere: { starts: string; why: string }[] = [
  {
    starts: "npm install && npm start",
    why: "starts the runtime; these tests run against one started as it starts it (`npm start -- --ephemeral`)",
  },
  { starts: "npm install && npm test", why: "runs every test, this one included" },
  { starts: "API_BASE_URL=", why: "needs a deployed stage and AWS credentials" },
  { starts: "npm install\nnpx cdk bootstrap", why: "deploys to an AWS account" },
  {
    starts: "npm run admin -- --help",
    why: "the operator CLI's commands with your own ids in them; test/integration/admin-cli.test.ts runs each",
  },
  {
    starts: "npm run admin -- chatbots update",
    why: "points a chatbot at a model server (Ollama, OpenAI) that is not here; engines.test.ts covers the engine",
  },
];

/** A folder like a clone's root, whose `.local/demo.json` is this runtime's. */
function workFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), "readme-commands-"));
  mkdirSync(join(folder, ".local"));
  if (!environment.demoFile) throw new Error("the README's commands run against the local runtime only");
  copyFileSync(environment.demoFile, join(folder, ".local", "demo.json"));
  return folder;
}

/** Runs shell commands as a person pasting them would, stopping at the first that fails. */
async function runCommands(commands: string): Promise<string> {
  const { stdout } = await run("bash", ["-e", "-o", "pipefail", "-c", commands], {
    cwd: workFolder(),
    timeout: 60_000,
    maxBuffer: 10 * 1024 * 1024,
    // `node` as a person's shell finds it; the project's npm scripts put its pinned Node first.
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
  });
  return stdout;
}

/**
 * The JSON objects printed (curl prints an answer without a line break after it, so they may run
 * together, and the stream's `data:` lines hold some too), and the Server-Sent Events' names.
 */
function answers(stdout: string): { json: Record<string, unknown>[]; events: string[] } {
  const json: Record<string, unknown>[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let at = 0; at < stdout.length; at++) {
    const char = stdout[at];
    if (inString) {
      if (char === "\\") at++;
      else if (char === '"') inString = false;
    } else if (char === '"' && depth > 0) inString = true;
    else if (char === "{") {
      if (depth === 0) start = at;
      depth++;
    } else if (char === "}" && depth > 0) {
      depth--;
      if (depth === 0) json.push(JSON.parse(stdout.slice(start, at + 1)) as Record<string, unknown>);
    }
  }
  const events = [...stdout.matchAll(/event: ([a-z.]+)\n/g)].map((match) => match[1] ?? "");
  return { json, events };
}

const first = (json: Record<string, unknown>[], key: string) => json.find((answer) => key in answer);

/** A placeholder left for the reader to fill in: `<conversation_id>`, `<id>`, `cbk_…`. */
const placeholder = /<[a-z][a-z _-]*>|cbk_…/i;

describe.runIf(isLocal)("the README's commands and the printed ready-to-paste ones", () => {
  const blocks = shellBlocks(readme);

  it("names why each README shell block that this test does not run cannot run here", () => {
    const runnable = blocks.filter((block) => !notRunHere.some((skip) => block.text.startsWith(skip.starts)));
    // Every exception still matches a block (a stale one would hide nothing but mislead).
    for (const skip of notRunHere) {
      expect(
        blocks.some((block) => block.text.startsWith(skip.starts)),
        `no README block starts with ${skip.starts}`,
      ).toBe(true);
    }
    expect(runnable.map((block) => block.text.split("\n")[0])).toEqual([
      "# The local demo's base URLs, API key and chatbot (npm start wrote them to .local/demo.json);",
      "# The demo admin, locally: npm start wrote the e-mail, password and Cognito client to .local/demo.json",
    ]);
  });

  it("runs the public API block as written: a conversation, a turn with its status, a stream, the history", async () => {
    const block = blocks.find((candidate) => candidate.text.startsWith("# The local demo's base URLs"));
    if (!block) throw new Error("the README has no public API block");
    const { json, events } = answers(await runCommands(block.text));
    expect(json.filter((answer) => "detail" in answer || "error" in answer)).toEqual([]);
    const started = first(json, "contact_id");
    expect(started).toMatchObject({ conversation_id: expect.any(String), contact_id: expect.any(String) });
    // The README's example answer shows `status`: so does the real one.
    const turn = json.find((answer) => "status" in answer && Array.isArray(answer.messages));
    expect(turn).toMatchObject({ conversation_id: started?.conversation_id, status: "open" });
    expect(turn?.messages).toEqual(expect.arrayContaining([expect.objectContaining({ role: "assistant" })]));
    expect(events).toEqual(expect.arrayContaining(["message.start", "message.delta", "message.end"]));
    const history = first(json, "has_more");
    expect(history).toMatchObject({ conversation_id: started?.conversation_id });
    // Both turns: the visitor's two messages and the replies.
    expect((history?.messages as unknown[] | undefined)?.length ?? 0).toBeGreaterThanOrEqual(4);
    expect(first(json, "organization_id")).toMatchObject({ organization_id: expect.any(String) });
    expect(json).toContainEqual({ message: "pong" });
    const comment = /# → (\{"conversation_id":"…","status".*)$/m.exec(block.text)?.[1];
    expect(comment, "the README shows the answer of POST /api/message with its status").toBeDefined();
  });

  it("runs the management API block as written: a person signs in and lists, creates", async () => {
    const block = blocks.find((candidate) => candidate.text.startsWith("# The demo admin, locally"));
    if (!block) throw new Error("the README has no management API block");
    const { json } = answers(await runCommands(block.text));
    expect(json.filter((answer) => "error" in answer || "detail" in answer)).toEqual([]);
    expect(first(json, "principal")).toMatchObject({ principal: { type: "user" } });
    expect(first(json, "chatbots")).toMatchObject({ chatbots: expect.any(Array) });
    expect(first(json, "key")).toMatchObject({
      name: "website",
      scope: "chat",
      key: expect.stringMatching(/^cbk_/),
    });
  });

  it("runs the commands npm start prints as they are: no placeholder to fill in", async () => {
    const log = environment.runtimeLogFile;
    if (!log) throw new Error("the runtime's output is written only locally");
    const printed = readFileSync(log, "utf8");
    const start = printed.indexOf("Start a conversation");
    const end = printed.indexOf("Console users", start);
    expect(start, "npm start prints its ready-to-paste commands").toBeGreaterThan(-1);
    // The commands: every line that is not a sentence ending in a colon (the headings between them).
    const commands = printed
      .slice(start, end)
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.endsWith(":"))
      .join("\n");
    expect(commands).not.toMatch(placeholder);
    const stdout = await runCommands(commands);
    const { json, events } = answers(stdout);
    expect(json.filter((answer) => "detail" in answer)).toEqual([]);
    expect(json[0]).toMatchObject({
      status: "open",
      messages: [expect.objectContaining({ role: "assistant" })],
    });
    expect(json[0]?.conversation_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(events).toEqual(expect.arrayContaining(["message.start", "message.end"]));
  });
});
