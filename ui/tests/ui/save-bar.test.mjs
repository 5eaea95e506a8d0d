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

// The thirteenth outside review: a new profile showed "Unsaved changes"
// beside "Saved. Changes apply…", which was about the profile saved before.
test("a save's outcome belongs to its profile: another opened or created does not show it, nor an edited draft", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  try {
    const { page } = app;
    const bar = page.getByTestId("save-bar");
    const message = page.getByTestId("save-message");
    const retries = async (n) => {
      const row = page.getByTestId("candidate-row").first();
      const field = row.getByTestId("section-transient").getByLabel("Retries", { exact: true });
      if (!(await field.isVisible())) await row.getByRole("button", { name: "Edit policy" }).click();
      await field.fill(n);
    };
    await retries("4");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await message.getByText("Saved.", { exact: false }).waitFor();

    await page.getByLabel("New profile").fill("Second");
    await page.getByRole("button", { name: "Create profile" }).click();
    await page.getByRole("heading", { name: "Second" }).waitFor();
    assert.equal(await message.count(), 0, "the new profile was never saved: no outcome of a save is shown for it");
    assert.match(await bar.textContent(), /All changes saved/);

    await page.getByRole("button", { name: /Demo \(simulated\)/ }).click();
    await page.getByRole("heading", { name: "Demo (simulated)" }).waitFor();
    assert.equal(await message.count(), 0, "said once, when it happened: coming back does not say it again");

    await retries("5");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await message.getByText("Saved.", { exact: false }).waitFor();
    // A reorder is an edit made with no field typed in: it too makes the outcome stale.
    await page.getByRole("button", { name: "Move Codex up" }).click();
    await bar.getByText("Unsaved changes").waitFor();
    assert.equal(await message.count(), 0, '"Saved." never stands beside "Unsaved changes"');
  } finally {
    await app.close();
  }
});

// The same review: on a phone the bar took ~90 px of the screen for good,
// even with nothing to save.
test("on a phone the save bar takes no room on screen until there is something to save, and its coming moves nothing", async () => {
  const phone = VIEWPORTS.find(([label]) => label === "phone")[1];
  const app = await openApp({ profiles: [demoProfile()] }, { ...phone, hash: "#/profiles" });
  try {
    const { page } = app;
    const bar = page.getByTestId("save-bar");
    await bar.getByText("All changes saved").waitFor();
    assert.ok((await at(bar)).y >= phone.height, `nothing to save: the bar waits at the editor's end, off screen`);

    // A field in the middle of the screen, being edited.
    const row = page.getByTestId("candidate-row").first();
    await row.getByRole("button", { name: "Edit policy" }).click();
    const field = row.getByTestId("section-transient").getByLabel("Retries", { exact: true });
    await field.evaluate((el) => el.scrollIntoView({ block: "center" }));
    const before = await at(field);
    await field.fill("4");
    await bar.getByText("Unsaved changes").waitFor();
    assert.deepEqual(await at(field), before, "the bar's coming moves the field being edited not at all");
    const shown = await at(bar);
    assert.ok(
      shown.y + shown.height <= phone.height && shown.y < phone.height - 40,
      `something to save: the bar stands at the foot of the screen (${JSON.stringify(shown)})`,
    );

    // Discard leaves nothing to save, but the bar stays where the pointer is.
    await page.getByRole("button", { name: "Discard" }).click();
    await bar.getByText("All changes saved").waitFor();
    assert.deepEqual(await at(bar), shown, "the bar does not go from under the pointer");
    assert.deepEqual(await at(field), before);
  } finally {
    await app.close();
  }
});

// An outside review (new user, real window): Retries = 99 and First delay =
// "abc" made Save name only First delay, and the message was cut off.
for (const [label, viewport] of VIEWPORTS) {
  test(`a refused save counts every field to fix, unreadable text too, and its whole message can be read (${label})`, async () => {
    const app = await openApp({ profiles: [demoProfile()] }, { ...viewport, hash: "#/profiles" });
    try {
      const row = app.page.getByTestId("candidate-row").first();
      await row.getByRole("button", { name: "Edit policy" }).click();
      const section = row.getByTestId("section-transient");
      await section.getByLabel("Retries", { exact: true }).fill("99");
      await section.getByLabel("First delay", { exact: true }).fill("abc");
      // The live check marks Retries before Save is pressed.
      await section.locator("[aria-invalid=true]").nth(1).waitFor();
      await app.page.getByRole("button", { name: "Save", exact: true }).click();
      const message = app.page.getByTestId("save-message");
      await message.waitFor();
      const text = (await message.textContent()).trim();
      assert.match(text, /^Not saved: 2 fields need fixing — see the marked fields\./, "both fields are counted");
      assert.match(text, /First delay: /, "the unreadable field, which the backend never sees, is named");
      assert.equal((await app.calls()).filter((c) => c.cmd === "save_candidates").length, 0, "nothing was sent");
      const whole = () =>
        message.evaluate((m) => ({
          cut: m.scrollHeight - m.clientHeight + (m.scrollWidth - m.clientWidth),
          top: m.getBoundingClientRect().top,
          bottom: m.getBoundingClientRect().bottom,
          height: window.innerHeight,
        }));
      await message.hover();
      let seen = await whole();
      assert.equal(seen.cut, 0, "pointed at, all of it is seen");
      assert.ok(seen.top >= 0 && seen.bottom <= seen.height, "on screen");
      await message.focus();
      seen = await whole();
      assert.equal(seen.cut, 0, "reached by Tab, all of it is seen");
      assert.ok(seen.top >= 0 && seen.bottom <= seen.height, "on screen");
    } finally {
      await app.close();
    }
  });
}
