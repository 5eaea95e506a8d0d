// Settings says a change was saved (new-user review, item 3): "Saved" beside
// the heading for a moment, in room kept for it, in view wherever the page
// is scrolled, and announced; a refused change says nothing of the kind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, at, openApp } from "./lib.mjs";

const announced = (app) => app.page.getByTestId("announcer").textContent();

for (const [label, viewport] of VIEWPORTS) {
  test(`a saved setting says Saved beside the heading, moving nothing, then the word goes (${label})`, async () => {
    const app = await openApp({}, { ...viewport, hash: "#/settings" });
    try {
      const saved = app.page.getByTestId("settings-saved");
      const notify = app.page.locator("#notify-succeeded");
      await notify.waitFor();
      const controls = [app.page.locator("#settings-heading"), notify, app.page.locator("#notify-waiting")];
      const where = () => Promise.all(controls.map(at));
      const before = await where();
      assert.equal((await saved.textContent()).trim(), "", "nothing is said before a change");

      await notify.click();
      await app.page.waitForFunction(() => window.__BACKEND__.settings.notify.succeeded === true);
      await saved.getByText("✓ Saved").waitFor();
      // The announcer writes its words a moment after it is emptied (so a repeat is read again).
      await app.page.getByTestId("announcer").filter({ hasText: "Settings saved" }).waitFor();
      assert.deepEqual(await where(), before, "the word's room was kept: nothing moved");

      await saved.getByText("✓ Saved").waitFor({ state: "detached", timeout: 5000 });
      assert.deepEqual(await where(), before, "nor as it goes");
    } finally {
      await app.close();
    }
  });
}

test("Saved is seen for a change at the foot of a long page", async () => {
  const app = await openApp({}, { width: 390, height: 844, hash: "#/settings" });
  try {
    const pause = app.page.getByRole("switch", { name: "Pause all new dispatches" });
    await pause.scrollIntoViewIfNeeded();
    await pause.click();
    const word = app.page.getByTestId("settings-saved").getByText("✓ Saved");
    await word.waitFor();
    const box = await word.boundingBox();
    assert.ok(box.y >= 0 && box.y + box.height <= 844, `the heading stays in view as the page scrolls: ${box.y}`);
    assert.equal(await pause.getAttribute("aria-checked"), "true");
  } finally {
    await app.close();
  }
});

test("a refused change does not say Saved", async () => {
  const app = await openApp(
    { failNext: { set_settings: { code: "io", message: "the settings file is read-only", fields: [] } } },
    { hash: "#/settings" },
  );
  try {
    await app.page.locator("#notify-succeeded").click();
    await app.page.getByRole("alert").filter({ hasText: "the settings file is read-only" }).waitFor();
    assert.equal((await app.page.getByTestId("settings-saved").textContent()).trim(), "");
    // Longer than the announcer's moment before it speaks: a "saved" would be there by now.
    await app.page.waitForTimeout(400);
    assert.notEqual(await announced(app), "Settings saved");
  } finally {
    await app.close();
  }
});
