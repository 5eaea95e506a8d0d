// A greyed-out action says why, in the engine's words: for an action the
// route's state does not offer, the snapshot's `unavailable` (what the
// engine answers a request for it); for Continue and Skip with context the
// preview's refusal. The window adds no reason of its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { routeSnapshot } from "./fixtures.mjs";

const WHY = {
  retry_now: "not possible while the route is running",
  skip_now: "no candidate is left to skip to in this cycle",
  cancel_wait: "the wait is cancelled already",
  resume: "only a stopped route resumes (engine words)",
  continue: "these candidates cannot resume a session",
  handover: "no candidate is left to hand over to",
};

/** Each greyed-out action button's title and the text its description points at. */
const greyed = (page) =>
  page.locator("[data-testid=route-detail] button[data-action]:disabled").evaluateAll((els) =>
    Object.fromEntries(
      els.map((b) => [
        b.dataset.action,
        {
          title: b.title,
          described: (b.getAttribute("aria-describedby") ?? "")
            .split(" ")
            .map((id) => document.getElementById(id)?.textContent?.trim() ?? "")
            .join(" "),
        },
      ]),
    ),
  );

test("every greyed-out action says why, in the engine's words, in its title and description", async () => {
  const unavailable = Object.entries(WHY).map(([action, why]) => ({ action, why }));
  const app = await openApp({
    profiles: [],
    routes: [{ snapshot: routeSnapshot(4, "running", { actions: ["stop"], unavailable }), attempts: [] }],
  });
  try {
    await app.page.locator('[data-route="4"]').click();
    await app.page.getByRole("heading", { name: "Route 4" }).waitFor();
    const seen = await greyed(app.page);
    assert.deepEqual(Object.keys(seen).sort(), Object.keys(WHY).sort(), "all but Stop are greyed out");
    for (const [action, why] of Object.entries(WHY)) {
      // The engine's clause, made a sentence: capitalised, with its full stop.
      const said = `${why.charAt(0).toUpperCase()}${why.slice(1)}.`;
      assert.equal(seen[action].title, said, `${action}: the title is the engine's reason`);
      assert.equal(seen[action].described, said, `${action}: described`);
    }
    const list = app.page.getByTestId("actions-unavailable");
    await list.locator("summary").click();
    const lines = (await list.locator("li").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
    assert.ok(
      lines.includes("Continue — These candidates cannot resume a session."),
      `listed under the buttons, one sentence after its label, no chained colons: ${lines.join(" | ")}`,
    );
    assert.ok(lines.includes("Retry now — Not possible while the route is running."), lines.join(" | "));
  } finally {
    await app.close();
  }
});

test("Continue offered by the state but refused by its preview says the preview's reason", async () => {
  const app = await openApp({
    profiles: [],
    routes: [
      {
        snapshot: routeSnapshot(5, "needs_manual", {
          candidate_count: 2,
          actions: ["retry_now", "skip_now", "stop", "continue", "handover"],
        }),
        attempts: [],
      },
    ],
  });
  try {
    await app.page.locator('[data-route="5"]').click();
    const button = app.page.locator('button[data-action="continue"]');
    await app.page.waitForFunction(
      () => document.querySelector('button[data-action="continue"]')?.title.includes("no session id"),
      null,
      { timeout: 5000 },
    );
    const seen = await greyed(app.page);
    assert.match(seen.continue.described, /^Attempt 1's Claude Code reported no session id/);
    assert.ok(await button.isDisabled());
  } finally {
    await app.close();
  }
});
