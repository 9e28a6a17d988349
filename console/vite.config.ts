/**
 * The console's build: static files only (index.html, one script, one style sheet). Runtime
 * settings (API, user pool) come from /config.json, written where the console is hosted, never
 * baked in here.
 */
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  // A build is what people download, whoever runs it: production JSX (no source paths and line
  // numbers in the bundle) and libraries' production code even when the environment says otherwise
  // (the test runner sets NODE_ENV=test, and the local runtime it starts builds the console).
  oxc: { jsx: { runtime: "automatic", importSource: "preact", development: false } },
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // One script: the whole console is small, and one request loads it.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
