// End to end in the real window: an error no rule knows, from a real run on
// the simulated provider, lands in the inbox; a local rule made from it in
// the app is checked and saved; the same run started again is now handled
// by the candidate's transient policy (a retry) instead of needing a person.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot, startApp } from "./webdriver.mjs";

const ERROR = "the flux capacitor is out of sync (unit 42)";
const KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";

const PROFILE = {
  version: 1,
  name: "Flux",
  candidates: [
    {
      name: "flux sim",
      agent: {
        kind: "simulated",
        script: [{ outcome: "unrecognised", after_ms: 300, message: `${ERROR} with key ${KEY}` }],
      },
      transient: {
        wait_for_reset: { enabled: false, max_wait_seconds: 0 },
        retry: { enabled: true, max_retries: 3, initial_interval_seconds: 30 },
        on_exhausted: "stop",
      },
      hard: {
        wait_for_reset: { enabled: false, max_wait_seconds: 0 },
        retry: { enabled: false, max_retries: 0, initial_interval_seconds: 0 },
        on_exhausted: "stop",
      },
    },
  ],
};

let app;
before(async () => {
  app = await startApp({
    prepare: (dbPath, dir) => {
      const file = join(dir, "flux.json");
      writeFileSync(file, JSON.stringify(PROFILE));
      const cli = join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug/recourse");
      execFileSync(cli, ["profile", "import", file, "--db", dbPath]);
    },
  });
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
});
after(async () => {
  await app?.stop();
});

const click = (css, label) => app.clickByText(css, label);

async function runFlux(prompt) {
  await app.execute("location.hash = '#/routes'");
  await app.waitForText("[data-testid=start-run]");
  await app.waitForText("#run-profile", (t) => t.includes("Flux"));
  await app.execute(
    `const s = document.querySelector("#run-profile");
     s.value = [...s.options].find((o) => o.textContent.includes("Flux")).value;
     s.dispatchEvent(new Event("change", { bubbles: true }));`,
  );
  await app.type("#run-prompt", prompt);
  assert.ok(await click("[data-testid=start-run] button", "Start run"));
}

test("an unclassified error becomes a local rule, and the next run is handled by the candidate's policy", async () => {
  await runFlux("first try");
  const reason = await app.waitForText("[data-testid=detail-manual-reason]", (t) => t.includes("Needs you"), 30000);
  assert.match(reason, /unclassified|no catalogue rule|not recognised/i, reason);

  await app.execute("location.hash = '#/catalogue/inbox'");
  const item = await app.waitForText("[data-testid=inbox-item]", (t) => t.includes("flux capacitor"), 15000);
  assert.ok(!item.includes("abcdefghijklmnop"), "the inbox shows sanitized text only");
  assert.ok(await click("[data-testid=inbox-item] button", "Create rule…"));
  // Nothing in "flux capacitor" says which failure it is: the code is asked for, not guessed.
  await app.waitForText("[data-testid=rule-class]", (t) => /choose its code/.test(t), 15000);
  await app.execute(
    `const s = document.querySelector("#rule-code");
     s.value = "provider_unavailable";
     s.dispatchEvent(new Event("change", { bubbles: true }));`,
  );
  const impact = await app.waitForText("[data-testid=check-impact]", (t) => /1 of \d+ inbox items/.test(t), 30000);
  assert.match(impact, /Not recognised \(Unclassified\) → Provider unavailable \(Transient\)/);
  assert.match(impact, /unknown, no rule → provider_unavailable, rule local\./);
  assert.match(await app.waitForText("[data-testid=check-fixtures]"), /All \d+ fixtures keep their result/);
  assert.match(await app.waitForText("[data-testid=check-broadness]"), /Bounded/);
  await app.execute(
    `const b = [...document.querySelectorAll("[data-testid=create-rule] button")].find((x) => x.textContent.trim() === "Save rule");
     return new Promise((ok) => { const t = setInterval(() => { if (!b.disabled) { clearInterval(t); ok(true); } }, 100); });`,
  );
  assert.ok(await click("[data-testid=create-rule] button", "Save rule"));
  const saved = await app.waitForText("[data-testid=rule-saved]", (t) => t.includes("Saved your local rule"), 15000);
  assert.match(saved, /catalogue 2026\.\d+\.\d+\+local\.1/);

  const rules = readFileSync(join(app.dir, "catalogue", "rules.toml"), "utf8");
  assert.match(rules, /flux capacitor is out of sync/);
  assert.ok(!rules.includes("abcdefghijklmnop"), "the key never reaches the local rules file");
  assert.ok(existsSync(join(app.dir, "catalogue", "fixtures")), "the evidence is kept as a local fixture");
  assert.ok(await click("[data-testid=inbox-panel] button, .inbox button", "Refresh"), "the inbox reloads");
  await app.waitForText("[data-testid=inbox-now]", (t) => /now classifies this as Provider unavailable/.test(t), 15000);

  await runFlux("second try");
  const countdown = await app.waitForText(
    "[data-testid=countdown]",
    (t) => /Retry 1 of 3 in [0-3]?\d s$/.test(t),
    30000,
  );
  assert.match(countdown, /Retry 1 of 3/, "the candidate's transient policy retries instead of stopping");
  assert.match(await app.waitForText("[data-testid=route-detail]"), /local\./, "the deciding local rule is shown");
});
