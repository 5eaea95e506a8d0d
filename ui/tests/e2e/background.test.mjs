// Background mode end to end, in the real app under Xvfb and a private
// D-Bus session bus (`dbus-run-session`): closing the window while a route
// waits asks, then hides it (the app keeps running: the tray); the wait
// fires and the desktop notification goes out over D-Bus, observed with
// dbus-monitor; a second launch exits at once and shows the hidden window
// again, leaving one app process on the database.
//
// The tray icon itself is not observed: Xvfb has no StatusNotifier host.
// Its texts and the close decision are unit tests in src-tauri/src/background.rs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApp, appBinary, appProcesses, repoRoot } from "./webdriver.mjs";

const cli = join(appBinary, "..", "recourse");
const WAIT_S = 6;

/** One simulated candidate: a usage limit that resets in WAIT_S s, then an
 * error nothing recognises, so the route needs a person after one wait. */
function seedProfile(dbPath, dir) {
  const step = (outcome, extra) => ({ outcome, after_ms: 200, ...extra });
  const off = { enabled: false, max_wait_seconds: 0 };
  const noRetry = { enabled: false, max_retries: 0, initial_interval_seconds: 0 };
  const doc = {
    version: 1,
    name: "Short wait",
    candidates: [
      {
        name: "quick",
        agent: {
          kind: "simulated",
          script: [step("usage_limit", { resets_in_s: WAIT_S }), step("unrecognised", { message: "mystery failure" })],
        },
        transient: { wait_for_reset: off, retry: noRetry, on_exhausted: "stop" },
        hard: { wait_for_reset: { enabled: true, max_wait_seconds: 60 }, retry: noRetry, on_exhausted: "stop" },
      },
    ],
  };
  const file = join(dir, "short-wait.json");
  writeFileSync(file, JSON.stringify(doc));
  execFileSync(cli, ["profile", "import", file, "--db", dbPath]);
}

const sh = (cmd, args) =>
  new Promise((resolve) => execFile(cmd, args, { timeout: 15000 }, (_e, out) => resolve(String(out ?? "").trim())));
/** Visible X windows titled Recourse. */
const visibleWindows = async () =>
  (await sh("xdotool", ["search", "--onlyvisible", "--name", "^Recourse$"])).split(/\s+/).filter(Boolean);
/** Processes with `file` open. */
function holders(file) {
  const pids = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === file)) pids.push(pid);
    } catch {
      /* gone, or not ours to read */
    }
  }
  return pids;
}

let app;
let monitor;
let seen = "";
before(async () => {
  assert.ok(process.env.DBUS_SESSION_BUS_ADDRESS, "run under dbus-run-session");
  monitor = spawn("dbus-monitor", ["--session", "interface='org.freedesktop.Notifications'"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  monitor.stdout.on("data", (d) => (seen += d));
  app = await startApp({ prepare: seedProfile });
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
});
after(async () => {
  monitor?.kill();
  await app?.stop();
});

const clickByText = (css, label) => app.clickByText(css, label);

test("close while a route waits → keep running → the window hides, the wait fires, the notification goes out", async () => {
  await app.waitForText("[data-testid=start-run]");
  await app.type("#run-prompt", "Tidy the changelog");
  assert.ok(await clickByText("[data-testid=start-run] button", "Start run"));
  await app.waitForText("[data-testid=countdown]", (t) => /Waiting for provider reset/.test(t), 15000);

  // Close it as the window manager would (WM_DELETE_WINDOW).
  const [window] = await visibleWindows();
  assert.ok(window, "the app window is mapped");
  execFileSync("python3", [join(repoRoot, "ui/tests/e2e/wm-close.py"), window]);
  const question = await app.waitForText("[data-testid=close-dialog]", (t) => /Keep Recourse running/.test(t));
  assert.match(question, /1 route is waiting/);
  assert.ok(
    await clickByText("[data-testid=close-dialog] [role=switch]", "Remember my choice (change it in Settings)"),
  );
  assert.ok(await clickByText("[data-testid=close-dialog] button", "Keep running"));
  for (let i = 0; i < 50 && (await visibleWindows()).length > 0; i++) await sleep(100);
  assert.deepEqual(await visibleWindows(), [], "the window is hidden, not closed");
  assert.equal(appProcesses(app.dbPath).length, 1, "the app keeps running");

  // The wait fires (~6 s), the next attempt fails with an unknown error: the
  // route needs a person and the notification goes out over D-Bus.
  const deadline = Date.now() + (WAIT_S + 20) * 1000;
  while (Date.now() < deadline && !/Route \d+ needs you/.test(seen)) await sleep(200);
  assert.match(seen, /member=Notify/, "a Notify call went out on the session bus");
  assert.match(seen, /string "Route 1 on “quick” needs you"/);

  // Closing again is decided by the remembered answer: no question.
  const settings = JSON.parse(await sh("cat", [join(app.dir, "dev.recourse.app", "settings.json")]));
  assert.deepEqual(settings, {
    close_while_active: "keep_running",
    default_profile: null,
    default_cwd: null,
    notify: { needs_you: true, succeeded: false, waiting: false },
    retention: { details_days: null, routes_days: null },
  });
});

test("a second launch exits at once and shows the running window", async () => {
  assert.deepEqual(await visibleWindows(), [], "hidden by the previous test");
  const started = Date.now();
  const second = spawn(appBinary, [], { env: app.env, stdio: "ignore" });
  const code = await new Promise((resolve) => second.once("exit", resolve));
  const took = Date.now() - started;
  assert.equal(code, 0, "the second launch exits cleanly");
  assert.ok(took < 10000, `exits quickly (${took} ms)`);
  for (let i = 0; i < 50 && (await visibleWindows()).length === 0; i++) await sleep(100);
  assert.equal((await visibleWindows()).length, 1, "the running app's window is shown again");
  assert.equal(appProcesses(app.dbPath).length, 1, "one app process, so one engine on the database");
  assert.equal(holders(app.dbPath).length, 1, "one process has the database open");
});

test("pausing from the route list refuses a new run until resumed", async () => {
  await app.execute("location.hash = '#/routes'");
  assert.ok(await clickByText("button", "Pause dispatches"));
  await app.waitForText("[data-testid=paused-badge]", (t) => t === "Paused");
  await app.type("#run-prompt", "Another one");
  assert.ok(await clickByText("[data-testid=start-run] button", "Start run"));
  await app.waitForText("[data-testid=start-run]", (t) => /new dispatches are paused/.test(t));
  assert.ok(await clickByText("button", "Resume dispatches"));
  // The badge keeps its place unseen while not paused (nothing beside it
  // moves): what goes is its test id and the toggle's word.
  await app.waitForText("[data-testid=pause]", (t) => t === "Pause dispatches");
  assert.equal(await app.execute("return document.querySelector('[data-testid=paused-badge]')"), null);
});

test("start at login writes a desktop autostart entry that starts this app, and turning it off removes it", async () => {
  // The real plugin; it writes under $HOME/.config (the test's own HOME).
  const dir = join(app.dir, ".config", "autostart");
  const entries = () => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".desktop")) : []);
  await app.execute("location.hash = '#/settings'");
  await app.waitForText("#autostart");
  assert.equal(
    await app.execute("return document.querySelector('#autostart').getAttribute('aria-checked')"),
    "false",
    "off by default",
  );
  assert.deepEqual(entries(), []);
  await app.execute("document.querySelector('#autostart').click()");
  await app.waitForText("#autostart", () => true);
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && entries().length === 0) await sleep(100);
  const [entry] = entries();
  assert.ok(entry, "an autostart entry was written");
  const text = readFileSync(join(dir, entry), "utf8");
  assert.match(text, /^Exec=.*recourse-app/m, `the entry starts this app: ${text}`);
  await app.execute("document.querySelector('#autostart').click()");
  const gone = Date.now() + 5000;
  while (Date.now() < gone && entries().length > 0) await sleep(100);
  assert.deepEqual(entries(), [], "turning it off removes the entry");
});
