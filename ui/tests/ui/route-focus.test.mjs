// Keyboard focus after a mouse action in a route's detail: on the button
// used while it is still there, else on something sensible (the detail's
// heading, or after a delete the route that took its place), never on the
// page's <body>, from where a keyboard user starts over at the top.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { routeSnapshot } from "./fixtures.mjs";

const iso = (msFromNow) => new Date(Date.now() + msFromNow).toISOString();

/** What has focus, as `tag#id[data-action|data-testid|data-route]`. */
const focused = (page) =>
  page.evaluate(() => {
    const a = document.activeElement;
    if (!a || a === document.body) return "body";
    const tag = a.dataset.action ?? a.dataset.testid ?? a.dataset.route ?? "";
    return `${a.tagName.toLowerCase()}#${a.id}[${tag}]`;
  });

const scenario = () => ({
  profiles: [],
  routes: [
    {
      snapshot: routeSnapshot(6, "retry_scheduled", {
        candidate_count: 3,
        deadline: iso(60e3),
        actions: ["retry_now", "skip_now", "cancel_wait", "stop"],
      }),
      attempts: [],
    },
    { snapshot: routeSnapshot(3, "succeeded", { actions: [] }), attempts: [] },
    { snapshot: routeSnapshot(2, "stopped", { actions: ["resume"] }), attempts: [] },
  ],
});

test("after Skip now, a cancelled delete, an archive and a delete, focus is never on the page itself", async () => {
  const app = await openApp(scenario());
  const page = app.page;
  const detail = page.getByTestId("route-detail");
  try {
    await page.locator('[data-route="6"]').click();
    await detail.getByRole("button", { name: "Skip now" }).click();
    await detail.locator(".badge.state-running").waitFor();
    await page.waitForFunction(() => document.activeElement !== document.body);
    assert.equal(await focused(page), "h2#detail-heading[]", "Skip now no longer applies: the heading");

    await page.locator('[data-route="3"]').click();
    await detail.getByTestId("delete-route").click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await page.waitForFunction(() => document.activeElement !== document.body, null, { timeout: 2000 });
    assert.equal(await focused(page), "button#[delete-route]", "a cancelled delete: back on Delete…");

    await detail.getByTestId("archive-route").click();
    await detail.getByTestId("archived-badge").waitFor();
    await page.waitForFunction(() => document.activeElement !== document.body, null, { timeout: 2000 });
    assert.equal(await focused(page), "button#[archive-route]", "the same button, now Unarchive: focus stays on it");

    await page.locator('[data-route="2"]').click();
    await detail.getByTestId("delete-route").click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete route" }).click();
    await page.locator('[data-route="2"]').waitFor({ state: "detached" });
    await page.waitForFunction(() => document.activeElement !== document.body, null, { timeout: 2000 });
    assert.match(await focused(page), /^(button#\[\d+\]|h2#routes-heading\[\])$/, "a deleted route: the list");
  } finally {
    await app.close();
  }
});
