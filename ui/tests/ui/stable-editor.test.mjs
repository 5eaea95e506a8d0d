// The profile editor keeps its controls where they are (issue 30, item 5):
// a field error, a refused save and a policy switch move nothing; a new
// Any command candidate names no program of its own; a greyed-out order
// button says why.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, at, openApp } from "./lib.mjs";
import { demoProfile } from "./fixtures.mjs";

/** Opens the first candidate's policy; boxes are measured relative to its row. */
async function openFirst(page) {
  const row = page.getByTestId("candidate-row").first();
  await row.getByRole("button", { name: "Edit policy" }).click();
  // Relative to the row: a fill may scroll the page, which moves nothing under the pointer.
  const within = async (locator) => {
    const [box, origin] = [await locator.boundingBox(), await row.boundingBox()];
    return { x: Math.round(box.x - origin.x), y: Math.round(box.y - origin.y), height: Math.round(box.height) };
  };
  return { row, within };
}

for (const [label, viewport] of VIEWPORTS) {
  test(`a field error and the refused save move neither the rows below nor Save and Discard (${label})`, async () => {
    const app = await openApp({ profiles: [demoProfile()] }, { ...viewport, hash: "#/profiles" });
    try {
      const { row, within } = await openFirst(app.page);
      const section = row.getByTestId("section-transient");
      const retries = section.getByLabel("Retries", { exact: true });
      const below = section.getByText("When recovery is used up", { exact: true });
      const hard = row.getByTestId("section-hard");
      const [belowBefore, hardBefore] = [await within(below), await within(hard)];
      await retries.fill("2.5");
      await section.getByText("2.5 is not a whole number: whole numbers only").waitFor();
      assert.deepEqual(await within(below), belowBefore, "the error had its place already: the next row stays");
      assert.deepEqual(await within(hard), hardBefore, "and so does everything after it");

      const save = app.page.getByRole("button", { name: "Save", exact: true });
      const discard = app.page.getByRole("button", { name: "Discard" });
      const [saveBefore, discardBefore] = [await at(save), await at(discard)];
      await save.click();
      const message = app.page.getByTestId("save-message");
      await message.getByText("Not saved:", { exact: false }).waitFor();
      assert.deepEqual(await at(save), saveBefore, "Save stays under the pointer that pressed it");
      assert.deepEqual(await at(discard), discardBefore, "Discard stays beside it");
      const box = await at(message);
      assert.ok(box.y >= 0 && box.y + box.height <= viewport.height, "the refusal is in view");
    } finally {
      await app.close();
    }
  });

  test(`switching a wait, a retry or the unclassified exception moves nothing; its fields stay, greyed and off (${label})`, async () => {
    const app = await openApp({ profiles: [demoProfile()] }, { ...viewport, hash: "#/profiles" });
    try {
      const { row, within } = await openFirst(app.page);
      const transient = row.getByTestId("section-transient");
      const hard = row.getByTestId("section-hard");
      const unclassified = row.getByTestId("section-unclassified");
      const cases = [
        // [section, switch, a field it governs, what comes after it]
        [transient, "Retry the same candidate", "Retries", transient.getByText("When recovery is used up")],
        [transient, "Wait for a trusted provider reset", "Longest wait", transient.getByRole("switch").nth(1)],
        [hard, "Retry the same candidate", "First delay", hard.getByText("When recovery is used up")],
        [hard, "Wait for a trusted provider reset", "Longest wait", hard.getByRole("switch").nth(1)],
        [
          unclassified,
          "Move to the next candidate after identical unclassified failures",
          "Identical failures",
          unclassified.getByTestId("schedule-unclassified"),
        ],
      ];
      for (const [section, name, field, after] of cases) {
        const toggle = section.getByRole("switch", { name });
        const input = section.getByRole("textbox", { name: field });
        for (let flip = 0; flip < 2; flip++) {
          const [before, toggleBefore] = [await within(after), await within(toggle)];
          await toggle.click();
          const on = (await toggle.getAttribute("aria-checked")) === "true";
          assert.deepEqual(await within(toggle), toggleBefore, `${name}: the switch stays under the pointer`);
          assert.deepEqual(await within(after), before, `${name} ${on ? "on" : "off"}: nothing below moves`);
          assert.equal(await input.count(), 1, `${field}: shown on and off alike`);
          assert.equal(await input.isVisible(), true, `${field}: visible while off, greyed`);
          assert.equal(await input.isDisabled(), !on, `${field}: ${on ? "editable" : "disabled"}`);
          const said = (await section.locator(`label[for="${await input.getAttribute("id")}"]`).textContent()).trim();
          assert.equal(said.endsWith("off"), !on, `${field}: its label says it is off only while it is: ${said}`);
        }
      }
      assert.equal(
        (await app.calls()).filter((c) => c.cmd === "save_candidates").length,
        0,
        "switching never saves by itself",
      );
    } finally {
      await app.close();
    }
  });
}

test("a switch turned off and on again gets back the values it held, not the kind's", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  try {
    const { row } = await openFirst(app.page);
    const transient = row.getByTestId("section-transient");
    const toggle = transient.getByRole("switch", { name: "Retry the same candidate" });
    const retries = transient.getByRole("textbox", { name: "Retries" });
    await retries.fill("5");
    await retries.blur();
    await toggle.click();
    assert.equal(await retries.inputValue(), "5", "while off, the field shows what it will come back with");
    await toggle.click();
    assert.equal(await retries.inputValue(), "5", "turned on again, the typed value is back");
    const unclassified = row.getByTestId("section-unclassified");
    const repeat = unclassified.getByRole("switch");
    const threshold = unclassified.getByRole("textbox", { name: "Identical failures" });
    if ((await repeat.getAttribute("aria-checked")) !== "true") await repeat.click();
    await threshold.fill("4");
    await threshold.blur();
    await repeat.click();
    await repeat.click();
    assert.equal(await threshold.inputValue(), "4", "the exception keeps its threshold across off and on");
  } finally {
    await app.close();
  }
});

test("a switched-off field's unreadable text is not an edit: the section saves, off", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  try {
    const { row } = await openFirst(app.page);
    const section = row.getByTestId("section-transient");
    await section.getByLabel("Retries", { exact: true }).fill("2.5");
    await section.getByRole("switch", { name: "Retry the same candidate" }).click();
    assert.equal(
      await section.getByRole("textbox", { name: "Retries" }).inputValue(),
      "3",
      "off, it shows what switching on starts with",
    );
    await app.page.getByRole("button", { name: "Save", exact: true }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).waitFor();
    const saved = (await app.calls()).filter((c) => c.cmd === "save_candidates").at(-1).args.candidates[0];
    assert.deepEqual(saved.policy.transient.retry, { enabled: false, max_retries: 0, initial_interval_seconds: 0 });
  } finally {
    await app.close();
  }
});

test("a new Any command candidate starts with no program, and saving it so is refused at the field", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "+ Add candidate" }).click();
    await app.page.getByLabel("Add a candidate: search agent kinds").fill("any command");
    await app.page.keyboard.press("Enter");
    const row = app.page.getByTestId("candidate-row").nth(2);
    assert.equal(await row.getByRole("button", { name: "Collapse" }).count(), 1, "it opens at the field it needs");
    const program = row.getByLabel("Program");
    assert.equal(await program.inputValue(), "", "no made-up program as a value");
    assert.equal(await program.getAttribute("placeholder"), "command name or path");
    await app.page.getByRole("button", { name: "Save", exact: true }).click();
    const error = row.locator(".field-error", { hasText: "Any command needs a program: write a command on PATH" });
    await error.waitFor();
    assert.equal(await program.getAttribute("aria-invalid"), "true");
    await program.fill("./run.sh");
    await error.waitFor({ state: "detached" });
  } finally {
    await app.close();
  }
});

test("a profile with no candidate yet is previewed as one that would not start, not as one to fix", async () => {
  const profile = { ...demoProfile(), candidates: [] };
  const app = await openApp({ profiles: [profile] }, { hash: "#/profiles" });
  try {
    await app.page.getByText("No enabled candidate: a route on this profile would not start.").waitFor();
    assert.equal(await app.page.getByText("Fix the fields marked above").count(), 0, "no field is marked");
  } finally {
    await app.close();
  }
});

test("a greyed-out move button says why, in its title and its description", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  try {
    const greyed = await app.page.locator("[data-testid=candidate-row] button:disabled").evaluateAll((els) =>
      els.map((b) => ({
        name: b.getAttribute("aria-label"),
        title: b.title,
        described: (b.getAttribute("aria-describedby") ?? "")
          .split(" ")
          .map((id) => {
            const el = document.getElementById(id);
            return el && el.getClientRects().length > 0 ? el.textContent.trim() : "";
          })
          .join(" "),
      })),
    );
    assert.deepEqual(
      greyed.map((g) => g.name),
      ["Move Claude (simulated) up", "Move Codex down"],
      "the first cannot go up, the last cannot go down",
    );
    for (const g of greyed) {
      assert.ok(g.title.length > 0, `${g.name}: a title says why`);
      assert.equal(g.described, g.title, `${g.name}: its description is the same reason, shown on the page`);
    }
    assert.match(greyed[0].title, /first/, "the first one's reason says it is first");
    assert.match(greyed[1].title, /last/, "the last one's reason says it is last");
  } finally {
    await app.close();
  }
});
