// The native file chooser lists the database's own folder while a `recourse`
// command opens and closes the database, and the open app keeps working.
//
// GTK's chooser opens every file it lists to guess its type; in the app's
// own process that dropped the app's POSIX locks on the database, the CLI
// then believed it was the last connection and deleted the journal (-wal,
// -shm) under the app: "database disk image is malformed" in every view until
// a restart. The chooser now runs in a process of its own.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { answerFileDialog, repoRoot, startApp } from "./webdriver.mjs";

const recourse = join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug/recourse");
const TITLE = "Working directory for the agent";

let app;
before(async () => {
  app = await startApp();
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
  await app.waitForText("#run-profile", (t) => t.includes("Demo (simulated)"), 30000);
});
after(async () => {
  await app?.stop();
});

const sh = (cmd, args) =>
  new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout: 30000 }, (e, out, err) =>
      e ? reject(new Error(`${e.message}: ${err}`)) : resolve(out),
    ),
  );

test("a chooser showing the database's folder does not cost the app its database", async () => {
  const chosen = join(app.dir, "project");
  mkdirSync(chosen);
  await app.type("#run-cwd", app.dir);
  await app.execute("document.querySelector('[data-testid=choose-cwd]').click()");

  const [win] = (await sh("xdotool", ["search", "--sync", "--onlyvisible", "--name", `^${TITLE}$`])).split(/\s+/);
  const pid = (await sh("xdotool", ["getwindowpid", win])).trim();
  assert.match(
    readFileSync(`/proc/${pid}/cmdline`, "latin1"),
    /--choose-path/,
    "the chooser is a process of its own, not the app's",
  );
  // GTK lists (and sniffs) the folder's files shortly after the window shows.
  await new Promise((r) => setTimeout(r, 1500));
  execFileSync(recourse, ["profile", "list", "--db", app.dbPath], { stdio: "pipe" });
  assert.ok(
    existsSync(`${app.dbPath}-wal`),
    "the CLI closing its connection left the app's journal in place: the app still holds its locks",
  );

  await answerFileDialog(`^${TITLE}$`, chosen);
  let cwd;
  for (let i = 0; i < 50 && cwd !== chosen; i++) {
    await new Promise((r) => setTimeout(r, 100));
    cwd = await app.execute("return document.getElementById('run-cwd').value");
  }
  assert.equal(cwd, chosen, "the folder chosen in the other process reaches the form");

  // The app's own connection still reads and writes: a run starts and is listed.
  await app.type("#run-prompt", "Tidy the changelog");
  assert.ok(await app.clickByText("[data-testid=start-run] button", "Start run"));
  const listed = await app.waitForText("[data-route]", (t) => t.includes("Tidy the changelog"), 15000);
  assert.doesNotMatch(listed, /malformed/);
  assert.equal(await app.text("[role=alert]"), null, "no view reports a database error");
});
