import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL("..", import.meta.url));

export default defineConfig({
  test: {
    root,
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/unit/**/*.test.ts"] },
      },
      {
        extends: true,
        // Synthesizing the stack (and its nested console stack) takes seconds on a busy machine.
        test: {
          name: "infra",
          include: ["test/infra/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        // The console in Chromium against its own local runtime (the same global setup as the
        // integration suite); one file at a time, so at most one browser runs.
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // What a page shows after a request (a turn, a listing) may take seconds on a busy machine.
          expect: { poll: { timeout: 30_000 } },
        },
      },
      {
        extends: true,
        // Each file starts a runtime of its own, whose DynamoDB Local its tests stall or kill.
        test: {
          name: "faults",
          include: ["test/faults/**/*.test.ts"],
          testTimeout: 150_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: { name: "n8n", include: ["n8n-nodes-chatbot-conversation/test/**/*.test.mts"] },
      },
    ],
  },
});
