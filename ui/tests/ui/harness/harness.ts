// Installs a fake backend behind Tauri's IPC, then starts the real app.
// Tests seed it through `window.__SCENARIO__` (see fake-backend.ts) and read
// `window.__CALLS__` to see which commands the UI sent.
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import { FakeBackend, type Scenario } from "./fake-backend";

declare global {
  interface Window {
    __SCENARIO__?: Scenario;
    __CALLS__: { cmd: string; args: unknown }[];
    __BACKEND__: FakeBackend;
    __EMIT__: typeof emit;
  }
}

const backend = new FakeBackend(window.__SCENARIO__ ?? {});
window.__CALLS__ = [];
window.__BACKEND__ = backend;
window.__EMIT__ = emit;
mockWindows("main");
mockIPC(
  async (cmd, args) => {
    window.__CALLS__.push({ cmd, args });
    const wait = window.__SCENARIO__?.slow?.[cmd];
    if (wait) await new Promise((done) => setTimeout(done, wait));
    return backend.handle(cmd, (args ?? {}) as Record<string, unknown>);
  },
  { shouldMockEvents: true },
);
await import("../../../src/main");
