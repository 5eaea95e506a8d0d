// The editor's opt-in exception for unclassified failures: off by default,
// a switch and the number of identical failures, one line on why, the
// backend's words for what it does, the backend validator's error at the
// field, and what a save sends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { demoProfile, POLICY_LIMITS } from "./fixtures.mjs";

const open = () => openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
const saved = async (app) =>
  (await app.calls()).filter((c) => c.cmd === "save_candidates").at(-1).args.candidates[0].policy.unclassified;

async function section(app) {
  await app.page.getByRole("button", { name: "Edit policy" }).first().click();
  const s = app.page.locator("[data-testid=section-unclassified]").first();
  return {
    s,
    toggle: s.getByRole("switch", { name: "Move to the next candidate after identical unclassified failures" }),
    words: s.getByTestId("schedule-unclassified"),
  };
}

test("the exception is off by default, says why in one line, and the backend says what it does", async () => {
  const app = await open();
  try {
    const { s, toggle, words } = await section(app);
    assert.equal(await toggle.getAttribute("aria-checked"), "false", "off unless a person opts in");
    assert.equal(await s.getByLabel("Identical failures", { exact: true }).count(), 0, "no field while off");
    const why = (await s.getByTestId("unclassified-why").textContent()).trim();
    assert.ok(why.startsWith("Why: "), why);
    assert.ok(!why.includes("\n"), "one line of why");
    await s.getByText("[backend unclassified] off, to Codex").waitFor();
    assert.equal(
      await words.textContent(),
      "[backend unclassified] off, to Codex",
      "the words are the backend's, for the draft, naming where a skip goes",
    );
  } finally {
    await app.close();
  }
});

test("switching it on starts from the kind's threshold; the validator's error shows at the field; save sends it", async () => {
  const app = await open();
  try {
    const { s, toggle, words } = await section(app);
    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-checked"), "true");
    const field = s.getByLabel("Identical failures", { exact: true });
    // The simulated kind's switch-on value, from the real backend's `agent_kinds`.
    assert.equal(await field.inputValue(), "3");
    const { min, max } = POLICY_LIMITS.repeat_threshold;
    const help = await s.locator(`#${await field.getAttribute("aria-describedby")}`).textContent();
    assert.ok(help.includes(`${min}–${max}`), `the bounds the backend exports: ${help}`);
    await s.getByText("[backend unclassified] skip after 3, to Codex").waitFor();
    await app.page.getByText("unclassified skip after 3").first().waitFor();

    await field.fill("11");
    await s.getByText(`must be ${min}–${max} identical failures when enabled (11 is too many)`).waitFor();
    assert.equal(await field.getAttribute("aria-invalid"), "true");
    assert.equal(
      await words.textContent(),
      "Fix the field marked above to see what this section does.",
      "no description of a value that cannot be saved",
    );
    assert.ok(
      (await app.calls()).some(
        (c) => c.cmd === "check_policy" && c.args.policy.unclassified.repeated_failure.threshold === 11,
      ),
      "the backend's validator judged it",
    );

    await field.fill("2");
    await s.getByText("[backend unclassified] skip after 2, to Codex").waitFor();
    assert.equal(await field.getAttribute("aria-invalid"), null, "the error goes once the field is fixed");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    assert.deepEqual(await saved(app), { repeated_failure: { enabled: true, threshold: 2 } });
  } finally {
    await app.close();
  }
});

test("the switch works from the keyboard, and switched off it saves in its stored form", async () => {
  const profile = demoProfile();
  profile.candidates[0].policy.unclassified = { repeated_failure: { enabled: true, threshold: 4 } };
  const app = await openApp({ profiles: [profile] }, { hash: "#/profiles" });
  try {
    const { s, toggle } = await section(app);
    assert.equal(await toggle.getAttribute("aria-checked"), "true", "as stored");
    assert.equal(await s.getByLabel("Identical failures", { exact: true }).inputValue(), "4");
    await toggle.focus();
    await app.page.keyboard.press("Space");
    assert.equal(await toggle.getAttribute("aria-checked"), "false", "Space switches it off");
    assert.equal(await s.getByLabel("Identical failures", { exact: true }).count(), 0);
    await app.page.keyboard.press("Space");
    assert.equal(await toggle.getAttribute("aria-checked"), "true", "and on again");
    await app.page.keyboard.press("Tab");
    const focused = await app.page.evaluate(() => document.activeElement?.id ?? "");
    assert.equal(
      focused,
      await s.getByLabel("Identical failures", { exact: true }).getAttribute("id"),
      "the threshold is the next stop",
    );
    assert.equal(
      await s.getByLabel("Identical failures", { exact: true }).inputValue(),
      "4",
      "switched back on, it gets back the threshold it held, as a switched-on retry does",
    );
    await toggle.click();
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    assert.deepEqual(
      await saved(app),
      { repeated_failure: { enabled: false, threshold: 0 } },
      "a disabled exception is sent normalized, like a switched-off retry",
    );
  } finally {
    await app.close();
  }
});
