// Controls never move under the pointer (issue 30, item 5, after the fifth
// outside review): a policy section's refused fields and its own refusal
// keep to places reserved for them, so the sections below stay.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, openApp } from "./lib.mjs";
import { demoProfile } from "./fixtures.mjs";

/** Where a box is relative to `origin` (a fill may scroll the page, which moves nothing under the pointer), in whole pixels: a sub-pixel is not a move. */
const relative = (origin) => async (locator) => {
  const [box, base] = [await locator.boundingBox(), await origin.boundingBox()];
  return { x: Math.round(box.x - base.x), y: Math.round(box.y - base.y) };
};
const near = (a, b) => Math.abs(a.x - b.x) <= 1 && Math.abs(a.y - b.y) <= 1;

/** Opens the second candidate's policy with retries on; returns its transient section and where the Unclassified switch is. */
async function openPolicy(viewport) {
  const app = await openApp({ profiles: [demoProfile()] }, { ...viewport, hash: "#/profiles" });
  const row = app.page.getByTestId("candidate-row").nth(1);
  await row.getByRole("button", { name: "Edit policy" }).click();
  const within = relative(row);
  const transient = row.getByTestId("section-transient");
  const unclassified = row.getByTestId("section-unclassified").getByRole("switch").first();
  const on = transient.getByRole("switch", { name: "Retry the same candidate" });
  if (!(await on.isChecked())) await on.click();
  const save = async (retries, delay) => {
    await transient.getByRole("textbox", { name: "Retries" }).fill(retries);
    await transient.getByRole("textbox", { name: "First delay" }).fill(delay);
    await app.page.getByRole("button", { name: "Save", exact: true }).click();
    await app.page.getByTestId("save-message").waitFor();
    await app.page.waitForTimeout(100);
  };
  return { app, transient, save, where: () => within(unclassified) };
}

// 1024 px: the two fields share the narrowest column the editor gives them.
for (const [label, viewport] of [...VIEWPORTS, ["narrow desktop", { width: 1024, height: 820 }]]) {
  test(`refused Retries and First delay keep the Unclassified switch in place (${label})`, async () => {
    const { app, transient, save, where } = await openPolicy(viewport);
    try {
      const before = await where();
      await save("4294967295", "999999 h");
      const errors = await transient.locator(".field-error").allTextContents();
      assert.equal(errors.length, 2, `both fields are refused: ${errors}`);
      const after = await where();
      assert.ok(
        near(after, before),
        `the errors had their places (${errors.join(" | ")}): ${JSON.stringify([before, after])}`,
      );
    } finally {
      await app.close();
    }
  });

  test(`the section's own refusal (the last retry too long) takes the schedule's place: nothing below moves (${label})`, async () => {
    const { app, transient, save, where } = await openPolicy(viewport);
    try {
      const before = await where();
      await save("10", "1 h");
      const said = transient.getByTestId("schedule-transient");
      await said.getByText("the last retry would wait 21 d 8 h").waitFor();
      assert.equal(await said.getAttribute("role"), "alert", "said as it appears, as a field's error is");
      const after = await where();
      assert.ok(near(after, before), `the refusal had its place: ${JSON.stringify([before, after])}`);
    } finally {
      await app.close();
    }
  });
}

test("the closed Advanced disclosure shows its marker and keeps no blank band for its hidden switch", async () => {
  const { app, transient } = await openPolicy(VIEWPORTS[0][1]);
  try {
    const advanced = transient.getByTestId("advanced-transient");
    assert.equal(await advanced.evaluate((d) => d.open), false, "closed: continuation is off");
    const summary = advanced.locator("summary");
    assert.equal(
      await summary.evaluate((s) => getComputedStyle(s).display),
      "list-item",
      "a list item draws the ▸/▾ marker, as the app's other disclosures",
    );
    // Every switch that can be turned (the two above Advanced) on: the words fill their box.
    const wait = transient.getByRole("switch", { name: "Wait for a trusted provider reset" });
    if (!(await wait.isChecked())) await wait.click();
    const words = transient.getByTestId("schedule-transient");
    await words.getByText("If the provider gives a trusted reset").waitFor();
    await app.page.waitForTimeout(100);
    const blank = await words.evaluate((w) => w.parentElement.clientHeight - w.getBoundingClientRect().height);
    assert.ok(blank < 20, `closed Advanced keeps no blank band under the words: ${blank} px`);
    await summary.click();
    await transient.getByRole("switch", { name: "Continue the agent's session automatically" }).waitFor();
  } finally {
    await app.close();
  }
});

test("the Program field is wide enough for its placeholder and a path at desktop width", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { width: 1280, height: 820, hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "+ Add candidate" }).click();
    await app.page.getByLabel("Add a candidate: search agent kinds").fill("any command");
    await app.page.keyboard.press("Enter");
    const program = app.page.getByTestId("candidate-row").nth(2).getByLabel("Program");
    const fits = await program.evaluate((input) => {
      const style = getComputedStyle(input);
      const ctx = document.createElement("canvas").getContext("2d");
      ctx.font = `${style.fontSize} ${style.fontFamily}`;
      const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return {
        room,
        placeholder: ctx.measureText(input.placeholder).width,
        path: ctx.measureText("/usr/local/bin/mytool-cli").width,
      };
    });
    assert.ok(fits.room >= fits.placeholder, `the placeholder is seen whole: ${JSON.stringify(fits)}`);
    assert.ok(fits.room >= fits.path, `a usual path is seen whole: ${JSON.stringify(fits)}`);
  } finally {
    await app.close();
  }
});
