// Issue 30 in the real app window (WebKitGTK via tauri-driver) on a real
// database: the "Any command" preview agrees with a real run of it, the
// working directory is said before a run and shown after it, and a program
// that cannot start leads with the cause and pushes no retry.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startApp, repoRoot } from "./webdriver.mjs";

const recourse = join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug/recourse");
const section = (retries) => ({
  wait_for_reset: { enabled: false, max_wait_seconds: 0 },
  retry: retries
    ? { enabled: true, max_retries: retries, initial_interval_seconds: 1 }
    : { enabled: false, max_retries: 0, initial_interval_seconds: 0 },
  on_exhausted: "skip",
});
const PROFILES = [
  {
    version: 1,
    name: "Script",
    candidates: [
      {
        name: "script",
        agent: { kind: "generic", program: "sh", args: ["-c", "echo 'overloaded_error: Overloaded' >&2; exit 1"] },
        transient: section(2),
        hard: section(0),
      },
      {
        name: "next",
        agent: { kind: "simulated", script: [{ outcome: "succeed", after_ms: 200 }] },
        transient: section(0),
        hard: section(0),
      },
    ],
  },
  {
    version: 1,
    name: "Missing",
    candidates: [
      {
        name: "claude",
        agent: { kind: "claude_code", program: "recourse-missing-cli" },
        transient: section(2),
        hard: section(0),
      },
    ],
  },
];

let app;
before(async () => {
  app = await startApp({
    prepare: (db, dir) => {
      for (const profile of PROFILES) {
        const file = join(dir, `${profile.name}.json`);
        writeFileSync(file, JSON.stringify(profile));
        execFileSync(recourse, ["profile", "import", file, "--db", db]);
      }
    },
  });
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
});
after(async () => {
  await app?.stop();
});

const text = (css) => app.text(css);

async function startRun(profile, prompt, cwd = null) {
  await app.execute("location.hash = '#/routes'");
  await app.waitForText("#run-profile", (t) => t.includes(profile));
  await app.execute(
    `const s = document.querySelector('#run-profile');
     s.value = [...s.options].find((o) => o.textContent.startsWith(arguments[0])).value;
     s.dispatchEvent(new Event('change', { bubbles: true }));`,
    [profile],
  );
  if (cwd !== null) await app.type("#run-cwd", cwd);
  await app.type("#run-prompt", prompt);
  assert.ok(await app.clickByText("[data-testid=start-run] button", "Start run"));
}

test("the preview of an any-command candidate says what its real run then does: a person decides", async () => {
  await app.execute("location.hash = '#/profiles'");
  await app.waitForText(".profiles", (t) => t.includes("Script"));
  assert.ok(await app.clickByText(".profiles button .pname", "Script"));
  const preview = await app.waitForText("[data-testid=preview-timeline]", (t) => t.includes("script"));
  assert.doesNotMatch(preview, /skip script/, `the preview does not skip: ${preview}`);
  assert.match(preview, /manual/i, `the preview stops for a person: ${preview}`);

  await startRun("Script", "run the script");
  const reason = await app.waitForText("[data-testid=detail-manual-reason]", (t) => t.length > 0, 30000);
  assert.match(reason, /not safe/, `the real run stops for a person as previewed: ${reason}`);
  assert.match(await text("[data-testid=route-detail]"), /Candidate 1 of 2/, "it was not skipped");
});

test("the working directory is said before a run, warned about outside git, and shown on the route", async () => {
  await app.execute("location.hash = '#/routes'");
  const own = await app.waitForText("[data-testid=run-cwd-hint]", (t) => t.includes("Runs in"));
  assert.match(own, /Recourse's own directory/, own);
  await app.type("#run-cwd", app.dir);
  const warned = await app.waitForText("[data-testid=run-cwd-hint]", (t) => t.includes(app.dir));
  assert.match(warned, /Warning: not a git repository/, warned);
  await startRun("Script", "in a plain folder", app.dir);
  await app.waitForText("[data-testid=route-cwd]", (t) => t.includes(app.dir), 30000);
});

test("a program that cannot start leads with the cause and the fix, and no retry is pushed", async () => {
  await startRun("Missing", "needs a missing program");
  const reason = await app.waitForText("[data-testid=detail-manual-reason]", (t) => /cannot start/.test(t), 30000);
  assert.match(reason, /Needs you:\s*cannot start recourse-missing-cli: not found on PATH/, reason);
  assert.match(reason, /set the candidate's Program/, reason);
  const primary = await app.execute(
    "return [...document.querySelectorAll('[data-testid=route-detail] button.primary[data-action]')].map((b) => b.textContent.trim())",
  );
  assert.deepEqual(primary, [], "Retry now would fail the same way: it is not the highlighted action");
});
