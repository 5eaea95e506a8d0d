// Closing the window with unsaved profile edits, in the real app under Xvfb:
// the window manager's close (WM_DELETE_WINDOW) asks save, discard or
// cancel in the window first; Cancel keeps the window and the edits, Save
// writes them to the database and then quits (nothing is active).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApp, appBinary, appProcesses, repoRoot } from "./webdriver.mjs";

const cli = join(appBinary, "..", "recourse");
const sh = (cmd, args) =>
  new Promise((resolve) => execFile(cmd, args, { timeout: 15000 }, (_e, out) => resolve(String(out ?? "").trim())));
const visibleWindows = async () =>
  (await sh("xdotool", ["search", "--onlyvisible", "--name", "^Recourse$"])).split(/\s+/).filter(Boolean);
const appRunning = () => appProcesses(app.dbPath).length > 0;

let app;
before(async () => {
  app = await startApp({
    prepare: (dbPath) => execFileSync(cli, ["profile", "create", "Nightly", "--agent", "simulated", "--db", dbPath]),
  });
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
});
after(async () => {
  await app?.stop();
});

const click = (css, label) => app.clickByText(css, label);

async function closeByWindowManager() {
  const [window] = await visibleWindows();
  assert.ok(window, "the app window is mapped");
  execFileSync("python3", [join(repoRoot, "ui/tests/e2e/wm-close.py"), window]);
}

test("closing with unsaved edits asks; cancel keeps them, save writes them and then quits", async () => {
  await app.execute("location.hash = '#/profiles'");
  await app.waitForText("#profile-heading", (t) => t === "Nightly");
  assert.ok(await click("[data-testid=candidate-row] [role=switch]", "Enabled"), "the row's enable switch");
  await app.waitForText(".savebar [role=status]", (t) => t === "Unsaved changes");

  await closeByWindowManager();
  const question = await app.waitForText("[data-testid=close-dialog]", (t) => /Save your changes/.test(t));
  assert.match(question, /Save your changes to “Nightly” before quitting\?/);
  assert.ok(await click("[data-testid=close-dialog] button", "Cancel"));
  await sleep(500);
  assert.equal((await visibleWindows()).length, 1, "cancel keeps the window");
  await app.waitForText(".savebar [role=status]", (t) => t === "Unsaved changes");

  await closeByWindowManager();
  await app.waitForText("[data-testid=close-dialog]", (t) => /Save your changes/.test(t));
  assert.ok(await click("[data-testid=close-dialog] button", "Save changes"));
  for (let i = 0; i < 100 && appRunning(); i++) await sleep(100);
  assert.equal(appRunning(), false, "nothing was active, so the app quits once saved");
  const doc = JSON.parse(
    execFileSync(cli, ["profile", "show", "Nightly", "--json", "--db", app.dbPath], { encoding: "utf8" }),
  );
  assert.equal(doc.candidates[0].enabled, false, "the edit was saved before quitting");
});
