// Controls never move under the pointer (issue 30, item 5, after the fifth
// outside review): Archive and Pause dispatches turn into their undoing in
// the same place, at the same size, and nothing below them moves; an area
// opens at its top, not where the area before it was scrolled to.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, at, openApp } from "./lib.mjs";
import { demoProfile, routeSnapshot } from "./fixtures.mjs";

const iso = (msFromNow) => new Date(Date.now() + msFromNow).toISOString();

const routesOf = (...snapshots) => ({
  profiles: [
    { id: 1, name: "Everyday", revision: 1, candidates: [], created_at: iso(-864e5), updated_at: iso(-864e5) },
  ],
  routes: snapshots.map((snapshot) => ({ snapshot, attempts: [] })),
});

for (const [label, viewport] of VIEWPORTS) {
  test(`Archive becomes Unarchive in its place, and Delete… stays (${label})`, async () => {
    const app = await openApp(routesOf(routeSnapshot(3, "succeeded", { candidate_count: 2 })), viewport);
    try {
      await app.page.locator('[data-route="3"]').click();
      const detail = app.page.getByTestId("route-detail");
      const archive = detail.getByTestId("archive-route");
      const remove = detail.getByTestId("delete-route");
      const before = [await at(archive), await at(remove)];
      await detail.getByRole("button", { name: "Archive", exact: true }).click();
      await detail.getByTestId("archived-badge").waitFor();
      const unarchive = detail.getByRole("button", { name: "Unarchive", exact: true });
      await unarchive.waitFor();
      assert.deepEqual([await at(archive), await at(remove)], before, "the same place and size: Delete… did not move");
      assert.equal(
        await archive.evaluate((b) => b === document.activeElement),
        true,
        "focus stays on the button pressed, now Unarchive",
      );
      await unarchive.click();
      await detail.getByTestId("archived-badge").waitFor({ state: "detached" });
      await detail.getByRole("button", { name: "Archive", exact: true }).waitFor();
      assert.deepEqual([await at(archive), await at(remove)], before, "and back");
    } finally {
      await app.close();
    }
  });

  test(`Pause dispatches becomes Resume dispatches in its place, and the filters stay (${label})`, async () => {
    const app = await openApp(routesOf(routeSnapshot(3, "succeeded", { candidate_count: 2 })), viewport);
    try {
      const toggle = app.page.getByTestId("pause");
      const filters = app.page.getByTestId("filter-needs_you");
      const before = [await at(toggle), await at(filters)];
      await app.page.getByRole("button", { name: "Pause dispatches" }).click();
      await app.page.getByTestId("paused-badge").waitFor();
      await app.page.getByRole("button", { name: "Resume dispatches" }).waitFor();
      assert.match(await app.page.getByTestId("paused-notice").textContent(), /no agent starts/);
      assert.deepEqual([await at(toggle), await at(filters)], before, "one button, one size; the list stays");
      await app.page.getByRole("button", { name: "Resume dispatches" }).click();
      await app.page.getByTestId("paused-badge").waitFor({ state: "detached" });
      assert.deepEqual([await at(toggle), await at(filters)], before, "and back");
    } finally {
      await app.close();
    }
  });

  test(`an area opens at its top, not where the one before was scrolled to (${label})`, async () => {
    const app = await openApp({ profiles: [demoProfile()] }, { ...viewport, hash: "#/profiles" });
    try {
      const main = app.page.locator("main#main");
      const scrolled = () => main.evaluate((m) => m.scrollTop);
      await app.page.getByTestId("candidate-row").first().getByRole("button", { name: "Edit policy" }).click();
      await main.evaluate((m) => m.scrollTo({ top: m.scrollHeight }));
      assert.ok((await scrolled()) > 100, "the profile editor is taller than the window");
      for (const area of ["Settings", "Profiles", "Routes"]) {
        await app.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: area }).click();
        await app.page.waitForTimeout(100);
        assert.equal(await scrolled(), 0, `${area} opens at its top`);
        await main.evaluate((m) => m.scrollTo({ top: m.scrollHeight }));
      }
    } finally {
      await app.close();
    }
  });
}
