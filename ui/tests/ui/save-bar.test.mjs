// The profile editor's save bar (the fifth outside review): one compact row
// at any width, Save and Discard never moving; a refused save says in one
// line what to do (each field shows its own error), and the whole message is
// never cut off for good: pointed at or reached by Tab, it opens whole.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, at, openApp } from "./lib.mjs";
import { demoProfile } from "./fixtures.mjs";

const LONG = Array.from(
  { length: 6 },
  (_, i) => `Candidate ${i + 1} › Transient › First delay: must be at least 1 s; 0 s is shorter`,
).join("; ");

for (const [label, viewport] of VIEWPORTS) {
  test(`a long refusal fits the bar's one line, opens whole by keyboard, and moves nothing (${label})`, async () => {
    const refusal = {
      code: "validation",
      message: LONG,
      fields: [
        {
          path: "candidates[0].transient.retry.initial_interval_seconds",
          message: "must be at least 1 s; 0 s is shorter",
        },
        {
          path: "candidates[1].transient.retry.initial_interval_seconds",
          message: "must be at least 1 s; 0 s is shorter",
        },
      ],
    };
    const app = await openApp(
      { profiles: [demoProfile()], failNext: { save_candidates: refusal } },
      { ...viewport, hash: "#/profiles" },
    );
    try {
      const row = app.page.getByTestId("candidate-row").first();
      await row.getByRole("button", { name: "Edit policy" }).click();
      await row.getByTestId("section-transient").getByLabel("Retries", { exact: true }).fill("4");
      const bar = app.page.locator(".savebar");
      const save = app.page.getByRole("button", { name: "Save", exact: true });
      const discard = app.page.getByRole("button", { name: "Discard" });
      const before = [await at(bar), await at(save), await at(discard)];
      // One row: the buttons' height and the panel's padding, no blank band.
      assert.ok(before[0].height <= 80, `a compact bar: ${before[0].height} px`);
      await save.click();
      const message = app.page.getByTestId("save-message");
      await message.waitFor();
      assert.match(await message.textContent(), /Not saved: 2 fields need fixing — see the marked fields\./);
      assert.deepEqual([await at(bar), await at(save), await at(discard)], before, "nothing moved");
      const box = await at(message);
      // One line (two short ones on a phone), no taller than the buttons beside it.
      assert.ok(box.height <= (await at(save)).height, `the bar's height: ${box.height} px`);
      // By keyboard: from Discard, back to the message; it opens whole, over the editor, moving nothing.
      await discard.focus();
      await app.page.keyboard.press("Shift+Tab");
      assert.equal(await message.evaluate((m) => m === document.activeElement), true, "Tab reaches the message");
      const whole = await message.evaluate((m) => ({
        cut: m.scrollHeight - m.clientHeight + (m.scrollWidth - m.clientWidth),
        top: m.getBoundingClientRect().top,
      }));
      assert.equal(whole.cut, 0, "all of it is seen");
      assert.ok(whole.top >= 0, "its start is on screen");
      assert.deepEqual([await at(bar), await at(save), await at(discard)], before, "and still nothing moved");
    } finally {
      await app.close();
    }
  });
}
