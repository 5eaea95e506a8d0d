// End to end in the real window: a route on the simulated provider hits a
// usage window and marks its account; a second route on the same account,
// started from the app, is not dispatched ("not dispatched: work limited
// until …"); the Accounts area shows the account limited with a countdown,
// the mark's code and rule and both routes waiting; Clear asks first and
// clears it, which the CLI reading the same database confirms.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot, startApp } from "./webdriver.mjs";

const hard = {
  wait_for_reset: { enabled: true, max_wait_seconds: 3600 },
  retry: { enabled: false, max_retries: 0, initial_interval_seconds: 0 },
  on_exhausted: "stop",
};
const PROFILE = {
  version: 1,
  name: "Limited",
  candidates: [
    {
      name: "claude sim",
      agent: {
        kind: "simulated",
        account: "work",
        script: [{ outcome: "usage_limit", after_ms: 300, resets_in_s: 1800 }],
      },
      transient: hard,
      hard,
    },
  ],
};
const cli = join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug/recourse");

let app;
before(async () => {
  app = await startApp({
    prepare: (dbPath, dir) => {
      const file = join(dir, "limited.json");
      writeFileSync(file, JSON.stringify(PROFILE));
      execFileSync(cli, ["profile", "import", file, "--db", dbPath]);
    },
  });
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
});
after(async () => {
  await app?.stop();
});

async function start(prompt) {
  await app.execute("location.hash = '#/routes'");
  await app.waitForText("#run-profile", (t) => t.includes("Limited"));
  await app.execute(
    `const s = document.querySelector("#run-profile");
     s.value = [...s.options].find((o) => o.textContent.includes("Limited")).value;
     s.dispatchEvent(new Event("change", { bubbles: true }));`,
  );
  await app.type("#run-prompt", prompt);
  assert.ok(await app.clickByText("[data-testid=start-run] button", "Start run"));
}

test("a limited account holds the next route, shows in Accounts with a countdown, and Clear asks first", async () => {
  await start("first");
  await app.waitForText("[data-testid=route-detail]", (t) => t.includes("Waiting for provider reset"), 30000);
  await start("second");
  const held = await app.waitForText("[data-testid=hold-text]", (t) => t.length > 0, 15000);
  assert.match(held, /^Not dispatched: work limited until .+; wait for the hard reset until /);

  await app.execute("location.hash = '#/accounts'");
  const state = await app.waitForText("[data-testid=account-state]", (t) => t.startsWith("Limited until"), 15000);
  assert.match(state, /\(in (2\d|30) min( \d+ s)?\)\.$/, `a countdown to the reset: ${state}`);
  await new Promise((r) => setTimeout(r, 1500));
  const later = await app.waitForText("[data-testid=account-state]");
  assert.notEqual(later, state, "the countdown is live");
  // Words first; the raw code and rule under the mark's Engine details.
  assert.match(await app.waitForText("[data-testid=mark]"), /^\s*Hard\s+Usage limit reached/);
  assert.match(
    await app.waitForText("[data-testid=mark-internals]"),
    /usage_limit_reached.*claude_code\.usage_limit_epoch\.v1/s,
  );
  assert.equal((await app.waitForText("[data-testid=waiting]")).trim(), "Route 1Route 2", "both routes wait on it");

  assert.ok(await app.clickByText("[data-testid=account] button", "Clear…"));
  await app.waitForText("dialog[open]", (t) => t.includes("Clear “work”?"));
  assert.ok(await app.clickByText("dialog[open] button", "Cancel"));
  const kept = JSON.parse(execFileSync(cli, ["accounts", "--json", "--db", app.dbPath]).toString());
  assert.equal(kept.accounts[0].marks.length, 1, "cancel clears nothing");

  assert.ok(await app.clickByText("[data-testid=account] button", "Clear…"));
  await app.waitForText("dialog[open]", (t) => t.includes("Clear “work”?"));
  assert.ok(await app.clickByText("dialog[open] button", "Clear"));
  await app.waitForText("[data-testid=account-status]", (t) => t === "Ready", 15000);
  const cleared = JSON.parse(execFileSync(cli, ["accounts", "--json", "--db", app.dbPath]).toString());
  assert.deepEqual(cleared.accounts[0].marks, [], "the database has no mark left");
  assert.equal(cleared.accounts[0].status.kind, "ready");
});
