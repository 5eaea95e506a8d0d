// Messages that come and go move nothing (issue 30, item 5, after the fourth
// outside review): the Program field's help, error and Check result share
// lines kept for them; a section's schedule keeps the lines its switches
// can give it; a refused save's message has its place inside the save bar;
// Settings' errors take their help's place and go as the value changes;
// the run form's refusal sits beside Start run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { at, openApp } from "./lib.mjs";
import { demoProfile } from "./fixtures.mjs";

const VIEWPORTS = [
  ["desktop", { width: 1400, height: 900 }],
  ["phone", { width: 390, height: 844 }],
];

/** Boxes relative to `origin`: a fill may scroll the page, which moves nothing under the pointer. */
const relative = (origin) => async (locator) => {
  const [box, base] = [await locator.boundingBox(), await origin.boundingBox()];
  return { x: Math.round(box.x - base.x), y: Math.round(box.y - base.y) };
};

/** Text cut off in an element: how many pixels of it are out of sight. */
const clipped = (locator) => locator.evaluate((e) => e.scrollHeight - e.clientHeight);

const NOT_READY = {
  program: "mytool",
  found: null,
  version: null,
  verified: null,
  credentials: [{ name: "MYTOOL_KEY", file: false, present: false }],
  install: "npm install -g mytool@1.2.3 --registry https://registry.example.org/with/a/long/path",
  problems: ["mytool is not found on PATH", "no credentials: set MYTOOL_KEY or log in with mytool login"],
  ready: false,
};

for (const [label, viewport] of VIEWPORTS) {
  test(`the Program field's help, its error and Check's result share one place: the fields below stay (${label})`, async () => {
    const app = await openApp({ profiles: [demoProfile()], readiness: NOT_READY }, { ...viewport, hash: "#/profiles" });
    try {
      await app.page.getByRole("button", { name: "+ Add candidate" }).click();
      await app.page.getByLabel("Add a candidate: search agent kinds").fill("any command");
      await app.page.keyboard.press("Enter");
      const row = app.page.getByTestId("candidate-row").nth(2);
      const within = relative(row);
      const program = row.getByLabel("Program");
      const below = [row.getByLabel("Model (optional)"), row.getByTestId("args-editor")];
      const where = () => Promise.all(below.map(within));

      // Its own error, live: the field is empty.
      const error = row.locator(".field-error", { hasText: "Any command needs a program" });
      await error.waitFor();
      const withError = await where();

      await program.fill("mytool");
      await error.waitFor({ state: "detached" });
      assert.deepEqual(await where(), withError, "the help in the error's place: nothing below moves");
      const words = row.getByTestId(`${await program.getAttribute("id")}-words`);
      assert.equal(await clipped(words), 0, "the help fits its lines");

      const check = row.getByRole("button", { name: "Check" });
      const checkBefore = await within(check);
      await check.click();
      const status = row.getByTestId("readiness-status");
      await status.waitFor();
      assert.equal((await status.textContent()).trim(), "Not ready: 2 problems");
      assert.deepEqual(await where(), withError, "Check's result in the same place: nothing below moves");
      assert.deepEqual(await within(check), checkBefore, "Check stays where it was pressed");
      assert.equal(await clipped(words), 0, "the result fits its lines");

      // The whole report, every line of it readable, in a dialog: it moves nothing.
      const details = row.getByRole("button", { name: "Details" });
      await details.focus();
      await app.page.keyboard.press("Enter");
      const report = app.page.getByTestId("readiness-report");
      await report.waitFor();
      const text = (await report.textContent()).replace(/\s+/g, " ");
      for (const line of [...NOT_READY.problems, "Credentials: none found", `Install: ${NOT_READY.install}`])
        assert.ok(text.includes(line), `the report says “${line}”: ${text}`);
      assert.equal(await clipped(report), 0, "the report is not cut");
      await app.page.keyboard.press("Escape");
      await report.waitFor({ state: "detached" });
      assert.equal(await details.evaluate((b) => b === document.activeElement), true, "focus is back on Details");
      assert.deepEqual(await where(), withError, "and nothing moved");
      await program.fill("");
      await error.waitFor();
      assert.equal(await clipped(words), 0, "the error fits the lines kept for it: all of it is seen");
    } finally {
      await app.close();
    }
  });

  test(`turning any switch of a class section keeps the fields below it in place (${label})`, async () => {
    const app = await openApp({ profiles: [demoProfile()] }, { ...viewport, hash: "#/profiles" });
    try {
      const row = app.page.getByTestId("candidate-row").nth(1);
      await row.getByRole("button", { name: "Edit policy" }).click();
      const within = relative(row);
      const unclassified = row.getByTestId("section-unclassified");
      const hard = row.getByTestId("section-hard");
      const after = () => Promise.all([within(unclassified), within(hard)]);
      await row.getByTestId("schedule-transient").filter({ hasText: "[backend schedule]" }).waitFor();
      const before = await after();
      for (const cls of ["transient", "hard"]) {
        const section = row.getByTestId(`section-${cls}`);
        for (const name of ["Wait for a trusted provider reset", "Retry the same candidate"]) {
          const toggle = section.getByRole("switch", { name });
          for (let flip = 0; flip < 2; flip++) {
            const schedule = await section.getByTestId(`schedule-${cls}`).elementHandle();
            const said = await schedule.textContent();
            await toggle.click();
            await app.page.waitForFunction(([e, old]) => e.textContent !== old, [schedule, said]);
            await app.page.waitForTimeout(50);
            assert.deepEqual(
              await after(),
              before,
              `${cls}: ${name} turned ${flip ? "off" : "on"}: nothing below moves`,
            );
          }
        }
      }
      // Unclassified is the last section: what follows it is the end of the row.
      const add = app.page.getByRole("button", { name: "+ Add candidate" });
      const toggle = unclassified.getByRole("switch");
      const first = await within(add);
      for (let flip = 0; flip < 2; flip++) {
        await toggle.click();
        await app.page.waitForTimeout(50);
        assert.deepEqual(await within(add), first, "the exception switched: what follows the row stays");
      }
    } finally {
      await app.close();
    }
  });

  test(`a refused save says why inside the save bar, which keeps its height: no editor content is covered (${label})`, async () => {
    const refusal = {
      code: "validation",
      message:
        "Candidate 1 “Claude (simulated)” › Transient › First delay: must be at most 1 h (2 h is too long); and 2 more problems in Candidate 2 “Codex”",
      fields: [{ path: "candidates[0].policy.transient.retry.initial_interval_seconds", message: "must be 1–3600" }],
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
      const [barBefore, saveBefore, discardBefore] = [await at(bar), await at(save), await at(discard)];
      await save.click();
      const message = app.page.getByTestId("save-message");
      await message.getByText("Not saved:", { exact: false }).waitFor();
      assert.deepEqual(await at(bar), barBefore, "the bar keeps its place and height");
      assert.deepEqual(await at(save), saveBefore, "Save stays under the pointer that pressed it");
      assert.deepEqual(await at(discard), discardBefore, "Discard stays beside it");
      const [m, b] = [await at(message), await at(bar)];
      assert.ok(
        m.y >= b.y && m.y + m.height <= b.y + b.height && m.x >= b.x && m.x + m.width <= b.x + b.width,
        `the message is inside the bar, over nothing of the editor: ${JSON.stringify({ m, b })}`,
      );
      // A message longer than its line ends in "…" and a keyboard reaches it (it then opens whole: save-bar.test.mjs).
      assert.equal(await message.getAttribute("tabindex"), "0");
      // Scrolled anywhere, the bar covers only itself: the editor scrolls clear of it.
      for (const to of [0.3, 0.6, 1]) {
        await app.page.evaluate((f) => {
          const main = document.querySelector("main");
          main.scrollTop = f * (main.scrollHeight - main.clientHeight);
        }, to);
        assert.deepEqual(await at(message), m, "the message goes with the bar, nowhere else");
      }
    } finally {
      await app.close();
    }
  });

  test(`Settings: an error takes its help's place and goes as the value changes, before any save (${label})`, async () => {
    const app = await openApp({ profiles: [demoProfile()] }, { ...viewport, hash: "#/settings" });
    try {
      const files = app.page.getByTestId("settings-files");
      const routes = app.page.getByLabel("Delete routes after");
      await routes.fill("30");
      await routes.press("Tab");
      await app.page.waitForFunction(() => window.__BACKEND__.settings.retention.routes_days === 30);
      const filesBefore = await at(files);
      const details = app.page.getByLabel("Remove attempt details after");
      await details.fill("40");
      await details.press("Tab");
      const refused = app.page.getByText("details go first: at most the 30 days routes are kept (40 is too many)");
      await refused.waitFor();
      assert.deepEqual(await at(files), filesBefore, "the refusal had its place: the sections below stay");
      await details.fill("20");
      await refused.waitFor({ state: "detached" });
      assert.equal(await details.getAttribute("aria-invalid"), null, "no longer marked, though not saved yet");
      await details.fill("2.5");
      await app.page.getByText("2.5 is not a whole number").waitFor();
      assert.deepEqual(await at(files), filesBefore, "a live error in the same place");
      await details.fill("");
      await app.page.getByText("2.5 is not a whole number").waitFor({ state: "detached" });

      // The running maximum: its field keeps its place switched off, and a refusal goes as it is retyped.
      const limit = app.page.getByRole("switch", { name: "Limit how many agents run at once" });
      const saveMax = app.page.getByRole("button", { name: "Save", exact: true });
      const inPanel = relative(limit);
      const saveBefore = await inPanel(saveMax);
      for (let flip = 0; flip < 2; flip++) {
        await limit.click();
        assert.deepEqual(await inPanel(saveMax), saveBefore, "switching the limit moves not its Save");
      }
    } finally {
      await app.close();
    }
  });
}

test("the global maximum's refusal goes as soon as the number is retyped", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/settings" });
  try {
    const limit = app.page.getByRole("switch", { name: "Limit how many agents run at once" });
    if ((await limit.getAttribute("aria-checked")) !== "true") await limit.click();
    const field = app.page.getByLabel("Most agents running at once");
    const save = app.page.getByRole("button", { name: "Save", exact: true });
    const saveBefore = await at(save);
    await field.fill("300");
    await save.click();
    const refused = app.page.getByText("must be 1 to 256 running agents (300 is too many)", { exact: false });
    await refused.waitFor();
    assert.deepEqual(await at(save), saveBefore, "the refusal took the help's place");
    await field.fill("30");
    await refused.waitFor({ state: "detached" });
  } finally {
    await app.close();
  }
});

test("Settings: a refused default directory's error goes as the path is retyped", async () => {
  const app = await openApp(
    {
      profiles: [demoProfile()],
      failNext: {
        set_settings: {
          code: "validation",
          message: "default_cwd: /nope does not exist",
          fields: [{ path: "default_cwd", message: "/nope does not exist" }],
        },
      },
    },
    { hash: "#/settings" },
  );
  try {
    const field = app.page.getByLabel("Default working directory");
    await field.fill("/nope");
    await field.press("Tab");
    const refused = app.page.locator("#default-cwd-error");
    await refused.waitFor();
    await field.fill("/nop");
    await refused.waitFor({ state: "detached" });
    assert.equal(await field.getAttribute("aria-invalid"), null);
  } finally {
    await app.close();
  }
});

for (const [label, viewport] of VIEWPORTS) {
  test(`the run form's refusal of no field sits beside Start run: nothing moves (${label})`, async () => {
    const app = await openApp(
      {
        profiles: [{ ...demoProfile(), name: "Everyday" }],
        failNext: {
          start_run:
            "invalid args `request` for command `start_run`: invalid value: integer `-1`, expected u32, and then some more words to make it long",
        },
      },
      { ...viewport, hash: "#/routes" },
    );
    try {
      const unfold = app.page.getByTestId("unfold-start");
      if (await unfold.isVisible()) await unfold.click();
      const form = app.page.getByTestId("start-run");
      await app.page.waitForFunction(() => document.querySelector("#run-profile")?.value === "1");
      await form.getByLabel("Prompt").fill("Anything");
      const start = form.getByRole("button", { name: "Start run" });
      const [startBefore, formBefore] = [await at(start), await at(form)];
      await start.click();
      const said = form.getByRole("alert").filter({ hasText: "Could not start the run" });
      await said.waitFor();
      assert.deepEqual(await at(start), startBefore, "Start run stays under the pointer");
      assert.deepEqual(await at(form), formBefore, "the form keeps its height: what is below stays");
      const cell = form.getByTestId("run-start-words");
      if ((await clipped(cell)) > 0)
        assert.equal(
          await cell.getAttribute("tabindex"),
          "0",
          "a longer refusal scrolls in its place, by keyboard too",
        );
    } finally {
      await app.close();
    }
  });
}
