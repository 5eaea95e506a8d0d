// Keyboard focus after a mouse action in a route's detail: on the button
// used while it is still there, else on something sensible (the detail's
// heading, or after a delete the route that took its place), never on the
// page's <body>, from where a keyboard user starts over at the top.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, openApp } from "./lib.mjs";
import { demoProfile, routeSnapshot } from "./fixtures.mjs";

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

// The thirteenth outside review: after Start run on a phone, focus went to
// <body> (the form it was in is hidden once the new route's detail shows).
for (const [label, viewport] of VIEWPORTS) {
  test(`after Start run, focus is on the new route's heading, as after opening a route (${label})`, async () => {
    const app = await openApp({ ...scenario(), profiles: [demoProfile()] }, viewport);
    try {
      const { page } = app;
      const unfold = page.getByTestId("unfold-start");
      if (await unfold.isVisible()) await unfold.click();
      const form = page.getByTestId("start-run");
      await form.getByLabel("Prompt").fill("Add a changelog entry");
      await form.getByRole("button", { name: "Start run" }).click();
      const heading = page.getByTestId("route-detail").getByRole("heading", { level: 2 });
      await heading.waitFor();
      const started = (await heading.textContent()).trim();
      assert.ok(!["Route 6", "Route 3", "Route 2"].includes(started), `the new route is shown: ${started}`);
      await page
        .waitForFunction(() => document.activeElement?.id === "detail-heading", null, { timeout: 3000 })
        .catch(() => {});
      assert.equal(await focused(page), "h2#detail-heading[]", "its actions are the next Tab stops");
    } finally {
      await app.close();
    }
  });
}
