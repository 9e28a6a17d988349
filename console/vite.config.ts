/**
 * The console's build: static files only (index.html, one script, one style sheet). Runtime
 * settings (API, user pool) come from /config.json, written where the console is hosted, never
 * baked in here.
 */
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // One script: the whole console is small, and one request loads it.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
