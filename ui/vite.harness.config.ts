// Builds the app with a mocked IPC backend for the fast UI tests in headless
// Chromium (tests/ui). The real app build is vite.config.ts.
import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig({
  plugins: [svelte()],
  root: "tests/ui/harness",
  logLevel: "warn",
  build: { target: "es2021", outDir: "../.dist", emptyOutDir: true },
});
