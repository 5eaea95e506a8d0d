// What another process did (the command line) arrives as backend events and
// changes the window without Refresh: an archive mark (same generation) and
// deleted routes. The real window does the same (tests/e2e/external-changes).
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { routeSnapshot } from "./fixtures.mjs";

test("an archive mark and a deletion made elsewhere leave the list and the open detail by themselves", async () => {
  const five = routeSnapshot(5, "succeeded");
  const app = await openApp({
    profiles: [],
    routes: [
      { snapshot: five, attempts: [] },
      { snapshot: routeSnapshot(3, "succeeded"), attempts: [] },
    ],
  });
  const page = app.page;
  try {
    await page.locator('[data-route="5"]').click();
    await page.getByRole("heading", { name: "Route 5" }).waitFor();
    // Archived by `recourse routes archive 5`: the engine publishes the row
    // again at the same generation, with its mark.
    const archived = { ...five, archived_at: new Date().toISOString() };
    await app.emit("route-changed", { route_id: 5, generation: five.generation, snapshot: archived });
    await page.getByTestId("archived-badge").waitFor({ timeout: 3000 });
    await page.locator('[data-route="5"]').waitFor({ state: "detached", timeout: 3000 });
    assert.equal(await page.locator('[data-route="3"]').count(), 1, "the other route stays");

    await app.emit("route-changed", { route_id: 5, generation: five.generation, snapshot: five });
    await page.locator('[data-route="5"]').waitFor({ timeout: 3000 });
    assert.deepEqual(
      await page.locator("[data-route]").evaluateAll((els) => els.map((e) => e.dataset.route)),
      ["5", "3"],
      "brought back elsewhere: in its place, newest first",
    );

    await app.emit("routes-removed", [5]);
    await page.locator('[data-route="5"]').waitFor({ state: "detached", timeout: 3000 });
    await page.getByTestId("route-detail").waitFor({ state: "detached", timeout: 3000 });
  } finally {
    await app.close();
  }
});
