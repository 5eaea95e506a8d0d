// Changes made from the command line while the app is open reach its window
// by themselves, without Refresh: a route `recourse run` made, archived and
// brought back with `recourse routes archive`, deleted with `recourse routes
// delete`: the list, the counts and the open detail follow within seconds.
// And a real mouse click on an action (WebKit does not focus a clicked
// button) leaves keyboard focus somewhere sensible, not on <body>.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startApp, repoRoot } from "./webdriver.mjs";

const recourse = join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug/recourse");
const quiet = {
  wait_for_reset: { enabled: false, max_wait_seconds: 0 },
  retry: { enabled: false, max_retries: 0, initial_interval_seconds: 0 },
  on_exhausted: "skip",
};
const PROFILE = {
  version: 1,
  name: "Quick",
  candidates: [
    {
      name: "quick",
      agent: { kind: "simulated", script: [{ outcome: "succeed", after_ms: 100 }] },
      transient: quiet,
      hard: quiet,
    },
  ],
};
/** Overloaded, then a retry ten minutes later: the route waits with Skip now offered. */
const WAITING = {
  version: 1,
  name: "Waiting",
  candidates: [
    {
      name: "busy",
      agent: { kind: "simulated", script: [{ outcome: "overloaded", after_ms: 100 }] },
      transient: { ...quiet, retry: { enabled: true, max_retries: 1, initial_interval_seconds: 600 } },
      hard: quiet,
    },
    {
      name: "next",
      agent: { kind: "simulated", script: [{ outcome: "succeed", after_ms: 100 }] },
      transient: quiet,
      hard: quiet,
    },
  ],
};
/** The engine looks for other processes' commits every second; the window gets 4 s in all. */
const SOON = 4000;

let app;
before(async () => {
  app = await startApp({
    prepare: (db, dir) => {
      for (const profile of [PROFILE, WAITING]) {
        const file = join(dir, `${profile.name}.json`);
        writeFileSync(file, JSON.stringify(profile));
        execFileSync(recourse, ["profile", "import", file, "--db", db]);
      }
    },
  });
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
  await app.waitForText("[data-testid=routes-empty]", () => true, 30000);
});
after(async () => {
  await app?.stop();
});

const cli = (...args) => execFileSync(recourse, [...args, "--db", app.dbPath], { stdio: "pipe" }).toString();
const count = (filter) => app.text(`[data-testid=filter-${filter}] .count`);
const rows = () => app.execute("return [...document.querySelectorAll('[data-route]')].map((r) => r.dataset.route)");
/** Waits until `check()` resolves truthy, without touching the window. */
async function soon(what, check) {
  const deadline = Date.now() + SOON;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 150));
  }
  assert.fail(`${what} did not reach the window within ${SOON} ms without Refresh (last: ${JSON.stringify(last)})`);
}

test("a run, an archive, its undoing and a delete from the command line show in the open window by themselves", async () => {
  cli("run", "--profile", "Quick", "--prompt", "from the command line");
  await soon("the new route", async () => (await rows()).includes("1"));
  await soon("its count", async () => (await count("all")) === "1" && (await count("finished")) === "1");

  await app.execute("document.querySelector('[data-route=\"1\"]').click()");
  await app.waitForText("#detail-heading", (t) => t === "Route 1");

  cli("routes", "archive", "1");
  await soon("the archive mark in the open detail", () => app.text("[data-testid=archived-badge]"));
  await soon("the archived route leaving the list", async () => !(await rows()).includes("1"));
  await soon("the counts", async () => (await count("archived")) === "1" && (await count("all")) === "0");

  cli("routes", "archive", "1", "--undo");
  await soon("the route back in the list", async () => (await rows()).includes("1"));
  await soon("the open detail without its mark", async () => (await app.text("[data-testid=archived-badge]")) === null);

  cli("routes", "delete", "1", "--yes");
  await soon("the deleted route leaving the list and the detail", async () => {
    const [shown, detail] = await Promise.all([rows(), app.text("[data-testid=route-detail]")]);
    return !shown.includes("1") && detail === null;
  });
  await soon("the counts after the delete", async () => (await count("all")) === "0");
});

test("after a real mouse click on Skip now, keyboard focus is on the detail, not the page", async () => {
  await app.execute("location.hash = '#/routes'");
  await app.waitForText("#run-profile", (t) => t.includes("Waiting"));
  await app.execute(
    `const s = document.querySelector('#run-profile');
     s.value = [...s.options].find((o) => o.textContent.startsWith('Waiting')).value;
     s.dispatchEvent(new Event('change', { bubbles: true }));`,
  );
  await app.type("#run-prompt", "wait then skip");
  assert.ok(await app.clickByText("[data-testid=start-run] button", "Start run"));
  await app.waitForText("[data-testid=route-detail] .badge", (t) => /Retry scheduled/.test(t), 30000);
  // A WebDriver element click is a real pointer click in WebKit.
  const found = await app.cmd("POST", "/element", {
    using: "css selector",
    value: '[data-testid=route-detail] button[data-action="skip_now"]',
  });
  await app.cmd("POST", `/element/${Object.values(found)[0]}/click`, {});
  await app.waitForText("[data-testid=route-detail] .badge", (t) => /Running|Succeeded/.test(t), 15000);
  const focused = await soon("focus after Skip now", () =>
    app.execute(
      "const a = document.activeElement; return a && a !== document.body ? (a.id || a.dataset.action || a.tagName) : null;",
    ),
  );
  assert.ok(["detail-heading", "stop"].includes(focused), `focus is on the detail: ${focused}`);
});
