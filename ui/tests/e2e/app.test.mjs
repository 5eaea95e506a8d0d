// End to end in the real app window (WebKitGTK via tauri-driver), on a fresh
// database with the seeded demo profile on the simulated provider.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { answerFileDialog, startApp } from "./webdriver.mjs";

let app;
before(async () => {
  app = await startApp();
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
});
after(async () => {
  await app?.stop();
});

const text = (css) =>
  app.execute("const el = document.querySelector(arguments[0]); return el ? el.textContent : null;", [css]);
const clickByText = (css, label) => app.clickByText(css, label);

test("the demo profile is read from the database and rendered", async () => {
  await app.execute("location.hash = '#/profiles'");
  const names = await app.waitForText(".profiles", (t) => t.includes("Demo (simulated)"));
  assert.match(names, /3 candidates/, "the seeded demo profile has three simulated candidates");
});

test("editing a policy and saving it persists through the engine", async () => {
  await app.execute("location.hash = '#/profiles'");
  await app.waitForText("[data-testid=candidate-row]");
  assert.ok(await clickByText("[data-testid=candidate-row] button", "Edit policy"), "first candidate expands");
  await app.waitForText("[data-testid=section-hard]");
  // Switch the hard class's exhausted outcome to stop, then save.
  assert.ok(await clickByText("[data-testid=section-hard] [role=radio]", "Stop for manual recovery"));
  await app.waitForText(".savebar", (t) => t.includes("Unsaved changes"));
  assert.ok(await clickByText(".savebar button", "Save"));
  await app.waitForText(".savebar", (t) => t.includes("All changes saved"));
  const summary = await text("[data-testid=policy-summary]");
  assert.match(summary, /Hard: wait for reset ≤ 2 min, then stop/, "the saved policy is what the row now summarises");
});

test("a run on the simulated provider shows live countdowns, and manual actions drive it", async () => {
  await app.execute("location.hash = '#/routes'");
  await app.waitForText("[data-testid=start-run]");
  await app.type("#run-prompt", "Rename the config loader");
  assert.ok(await clickByText("[data-testid=start-run] button", "Start run"));
  // Candidate 1 hits a usage limit that resets in 30 s: a trusted reset within its 2 min max wait.
  const first = await app.waitForText(
    "[data-testid=countdown]",
    (t) => /Waiting for provider reset: [0-5]?\d s$/.test(t),
    30000,
  );
  await new Promise((r) => setTimeout(r, 2200));
  const later = await text("[data-testid=countdown]");
  const secs = (t) => Number(t.match(/(\d+) s$/)[1]);
  assert.ok(secs(later) < secs(first), `countdown moves down: ${first} then ${later}`);
  // Skip now: candidate 2 (Codex, simulated) runs a tool, then its stream drops: the gate hands it to you.
  assert.ok(await clickByText("[data-testid=route-detail] button", "Skip now"), "skip now is offered while waiting");
  await app.waitForText(
    "[data-testid=detail-manual-reason]",
    (t) => /not safe to recover automatically/.test(t),
    30000,
  );
  assert.match(await text("[data-testid=route-detail]"), /Candidate 2 of 3/);
  assert.ok(await clickByText("[data-testid=route-detail] button", "Stop"), "stop is offered while it needs you");
  await app.waitForText("[data-testid=route-detail] .badge", (t) => /stopped/i.test(t), 15000);
  assert.ok(
    await app.execute(
      "return [...document.querySelectorAll('[data-testid=route-detail] button')].some((b) => b.textContent.trim() === 'Resume' && !b.disabled)",
    ),
    "a stopped route offers Resume",
  );
});

test("the route list filters and searches in the real database", async () => {
  // The route stopped by the test above is the only one.
  const shown = () => app.execute("return [...document.querySelectorAll('[data-route]')].map((b) => b.dataset.route)");
  const until = async (want, what) => {
    const deadline = Date.now() + 15000;
    while (Date.now() < deadline) {
      if (JSON.stringify(await shown()) === JSON.stringify(want)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`${what}: expected routes ${JSON.stringify(want)}, got ${JSON.stringify(await shown())}`);
  };
  const [id] = await shown();
  assert.ok(id, "the stopped route is listed");
  // Counted by state in SQL, and recounted after the stop's event.
  await app.waitForText("[data-testid=filter-stopped]", (t) => /Stopped\s*1/.test(t));
  await app.execute("document.querySelector('[data-testid=filter-active]').click()");
  await until([], "a stopped route is not active");
  await app.execute("document.querySelector('[data-testid=filter-finished]').click()");
  await until([], "stopped by you is not finished");
  await app.execute("document.querySelector('[data-testid=filter-stopped]').click()");
  await until([id], "it has a filter of its own");
  await app.execute("document.querySelector('[data-testid=filter-all]').click()");
  await app.type("#route-search", "CONFIG loader");
  await until([id], "prompt text, case ignored");
  await app.type("#route-search", "no such prompt");
  await until([], "text no route holds");
  await app.waitForText("[data-testid=routes-no-match]");
  await app.type("#route-search", "");
  await until([id], "a cleared search lists every route again");
});

test("a profile exported to a file imports back in the app after showing what changed", async () => {
  const file = `${app.dir}/demo-profile.json`;
  await app.execute("location.hash = '#/profiles'");
  await app.waitForText("[data-testid=candidate-row]");
  const saved = answerFileDialog("^Export", file);
  assert.ok(await clickByText("button", "Export…"));
  await saved;
  await app.waitForText("[data-testid=file-note], [role=alert]", (t) => t.includes("Exported"));
  const exported = readFileSync(file, "utf8");
  assert.match(exported, /"name": "Demo \(simulated\)"/);
  writeFileSync(file, exported.replace('"max_retries": 3', '"max_retries": 5'));

  const opened = answerFileDialog("^Import a profile", file);
  assert.ok(await clickByText("button", "Import from file…"));
  await opened;
  const table = await app.waitForText("dialog[open] tbody", (t) => t.includes("Retries"));
  assert.match(table, /Transient › Retries\s*3\s*5/, "the one change, in words, before and after");
  assert.ok(await clickByText("dialog[open] button", "Replace “Demo (simulated)”"));
  await app.waitForText("[data-testid=file-note], [role=alert]", (t) => t.includes("Replaced"));
  // The rows are drawn anew for the replaced profile; each asks the backend
  // for its summary, so it is waited for.
  const summaries = await app.waitForText("ol.candidates", (t) => /retry 5× from 2 s/.test(t));
  assert.match(summaries, /retry 5× from 2 s/, "the imported policy is what the editor now shows");
});
