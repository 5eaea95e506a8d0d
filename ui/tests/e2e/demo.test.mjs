// The seeded demo, left alone in the real app window, walks through what
// Recourse is for: a reset wait, a retry, a skip and the safety gate, each
// candidate failing in the words of the CLI it is named after; its timeline
// draws it; then the route is finished by hand, archived and deleted.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { startApp, repoRoot } from "./webdriver.mjs";

const recourse = join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug/recourse");

let app;
before(async () => {
  app = await startApp();
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
});
after(async () => {
  await app?.stop();
});

const text = (css) => app.text(css);
const entries = () =>
  app.execute("return [...document.querySelectorAll('[data-testid=timeline-entry]')].map((e) => e.textContent)");

test("left alone, the demo waits for a reset, retries, skips, and stops at the gate; its timeline draws it", async () => {
  await app.execute("location.hash = '#/routes'");
  await app.waitForText("[data-testid=start-run]");
  await app.type("#run-prompt", "Show me what Recourse does");
  assert.ok(await app.clickByText("[data-testid=start-run] button", "Start run"));
  await app.waitForText("[data-testid=countdown]", (t) => /Waiting for provider reset/.test(t), 30000);
  await app.waitForText("[data-testid=timeline-deadline]", () => true, 10000);
  await app.waitForText("[data-testid=detail-manual-reason]", (t) => /not safe to recover/.test(t), 90000);
  const timeline = await entries();
  assert.match(timeline.join("\n"), /Waiting for the provider's reset/);
  assert.match(timeline.join("\n"), /Retry 1 of 1 after 3 s/);
  assert.match(timeline.join("\n"), /Skipped to Codex \(simulated\)/);
  assert.match(timeline.at(-1), /Needs you/);
  const excerpts = await app.execute(
    "return [...document.querySelectorAll('[data-testid=attempt] .excerpt')].map((e) => e.textContent)",
  );
  assert.match(excerpts[0], /Claude AI usage limit reached/, "Claude Code's words");
  assert.match(excerpts.at(-1), /^stream disconnected before completion/, "Codex's words");
});

test("Skip now finishes it on Gemini CLI; archived, it leaves the lists; deleted, it is gone from the database", async () => {
  assert.ok(await app.clickByText("[data-testid=route-detail] button", "Skip now"));
  // The gate refused recovery: sending the prompt again asks first.
  await app.waitForText("dialog[open]", (t) => /may repeat work/.test(t));
  assert.ok(await app.clickByText("dialog[open] button", "Skip now anyway"));
  await app.waitForText("[data-testid=route-detail] .badge", (t) => /succeeded/i.test(t), 30000);
  const id = Number((await text("#detail-heading")).replace("Route ", ""));
  assert.ok(await app.clickByText("[data-testid=route-detail] button", "Archive"));
  await app.waitForText("[data-testid=filter-archived]", (t) => /Archived\s*1/.test(t));
  const listed = execFileSync(recourse, ["routes", "--db", app.dbPath], { encoding: "utf8" });
  assert.match(listed, new RegExp(`route ${id} .*\\| archived`), listed);
  assert.ok(await app.clickByText("[data-testid=route-detail] button", "Delete…"));
  assert.ok(await app.clickByText("dialog[open] button", "Delete route"));
  await app.waitForText("[data-testid=filter-archived]", (t) => /Archived\s*0/.test(t));
  let gone = "";
  try {
    execFileSync(recourse, ["route", String(id), "--db", app.dbPath], { encoding: "utf8", stdio: "pipe" });
  } catch (err) {
    gone = String(err.stderr);
  }
  assert.equal(gone, `error: route ${id} does not exist\n`);
});
