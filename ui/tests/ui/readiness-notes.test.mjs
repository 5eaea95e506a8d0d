// Candidates that cannot start now are named before a run and after a save
// (issue of the new-user review, items 1 and 2): the run form warns beside
// Start run when no enabled candidate of the chosen profile is ready and
// notes the ones that are not; the profile editor's Save says which saved
// candidates are not ready. Neither refuses anything.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, at, openApp } from "./lib.mjs";
import { NOW, candidate, immediate } from "./fixtures.mjs";

const SKIP = { transient: immediate("skip"), hard: immediate("skip") };

/** A candidate of `kind` that starts `program`. */
function runs(id, name, kind, program) {
  const c = candidate(id, name, kind, SKIP);
  return { ...c, agent: { ...c.agent, program } };
}

const profile = (id, name, candidates) => ({ id, name, revision: 1, created_at: NOW, updated_at: NOW, candidates });

const PROFILES = [
  profile(1, "Demo", [runs(11, "opus", "claude_code", "claude")]),
  profile(2, "Mixed", [runs(21, "opus", "claude_code", "claude"), runs(22, "Sim", "simulated", null)]),
  profile(3, "Offline", [runs(31, "Sim", "simulated", null)]),
];

/** What the backend's check says of a program that is not installed. */
const MISSING = {
  program: "claude",
  found: null,
  version: null,
  verified: "2.1.332",
  credentials: [],
  install: "npm install -g @anthropic-ai/claude-code@2.1.332",
  problems: ["claude is not found on PATH"],
  ready: false,
};
const READY = { ...MISSING, program: "", found: null, install: null, problems: [], ready: true };
const SCENARIO = { profiles: PROFILES, readinessOf: { claude: MISSING, simulated: READY } };

for (const [label, viewport] of VIEWPORTS) {
  test(`the run form warns beside Start run when no candidate of the profile can start, and follows the choice (${label})`, async () => {
    const app = await openApp(SCENARIO, viewport);
    try {
      const form = app.page.getByTestId("start-run");
      const choose = form.getByLabel("Profile");
      const note = form.getByTestId("run-readiness");
      const start = form.getByRole("button", { name: "Start run" });
      const below = [start, form.getByLabel("Prompt")];
      const where = () => Promise.all(below.map(at));
      const before = await where();

      await choose.selectOption({ label: "Demo · 1 enabled" });
      await form.getByText("No candidate can start now; Start run still tries.").waitFor();
      await form.getByTestId("run-why").click();
      assert.match(
        await app.page.getByTestId("run-why-unready").textContent(),
        /opus — claude is not found on PATH/,
        "Why… names each candidate and why, in the backend's words",
      );
      await app.page.getByTestId("run-why-dialog").getByRole("button", { name: "Close" }).click();
      assert.ok(await note.evaluate((e) => e.classList.contains("warning")), "none can start: it is a warning");
      const words = form.getByTestId("run-start-words");
      assert.equal(
        await words.evaluate((e) => e.scrollHeight - e.clientHeight),
        0,
        "the whole warning fits the lines kept beside Start run",
      );
      assert.deepEqual(await where(), before, "the warning moves neither Start run nor the prompt");

      await choose.selectOption({ label: "Mixed · 2 enabled" });
      await form.getByText("1 of 2 candidates can't start now.").waitFor();
      assert.ok(
        !(await note.evaluate((e) => e.classList.contains("warning"))),
        "another candidate can start: a quiet note, not a warning",
      );

      await choose.selectOption({ label: "Offline · 1 enabled" });
      await app.page.waitForFunction(
        () => document.querySelector("[data-testid=run-readiness]")?.textContent?.trim() === "",
        null,
        { timeout: 5000 },
      );
      assert.deepEqual(await where(), before, "nothing moved as the note came and went");
    } finally {
      await app.close();
    }
  });
}

test("the warning does not refuse: Start run still starts the run", async () => {
  const app = await openApp(SCENARIO);
  try {
    const form = app.page.getByTestId("start-run");
    await form.getByLabel("Profile").selectOption({ label: "Demo · 1 enabled" });
    await form.getByText("No candidate can start now").waitFor();
    await form.getByLabel("Prompt").fill("Fix the flaky test");
    await form.getByRole("button", { name: "Start run" }).click();
    await app.page.waitForFunction(() => window.__CALLS__.some((c) => c.cmd === "start_run"), null, { timeout: 5000 });
  } finally {
    await app.close();
  }
});

test("a warning about the profile chosen before is never shown for the one chosen now", async () => {
  // The check of Demo answers late, after Offline was chosen.
  const app = await openApp({ ...SCENARIO, slow: { readiness: 600 } });
  try {
    const form = app.page.getByTestId("start-run");
    await form.getByLabel("Profile").selectOption({ label: "Demo · 1 enabled" });
    await form.getByLabel("Profile").selectOption({ label: "Offline · 1 enabled" });
    await app.page.waitForTimeout(1500);
    assert.equal((await form.getByTestId("run-readiness").textContent()).trim(), "", "Offline's candidate is ready");
  } finally {
    await app.close();
  }
});

test("a profile with no enabled candidate is said to have none", async () => {
  const off = { ...runs(41, "Sim", "simulated", null), enabled: false };
  const app = await openApp({ ...SCENARIO, profiles: [...PROFILES, profile(4, "Idle", [off])] });
  try {
    const form = app.page.getByTestId("start-run");
    await form.getByLabel("Profile").selectOption({ label: "Idle · 0 enabled" });
    await form.getByText("No candidate is enabled: enable one in Profiles.").waitFor();
  } finally {
    await app.close();
  }
});

test("Save says which saved candidates cannot start now and why, and saves them all the same", async () => {
  const app = await openApp(SCENARIO, { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: /^Mixed/ }).click();
    const row = app.page.getByTestId("candidate-row").filter({ hasText: "Sim" });
    await row.getByRole("switch", { name: "Enabled" }).click();
    await app.page.getByRole("button", { name: "Save", exact: true }).click();
    const message = app.page.getByTestId("save-message");
    await message.waitFor();
    assert.equal(
      (await message.textContent()).trim(),
      "Saved, but not ready to start now: “opus” — claude is not found on PATH. Changes apply to the next decision " +
        "of every route; pending waits keep their deadlines.",
    );
    assert.ok(await message.evaluate((e) => e.classList.contains("warn")), "said as a warning");
    const saves = (await app.calls()).filter((c) => c.cmd === "save_candidates");
    assert.equal(saves.length, 1, "the save was not held back");
    const checked = (await app.calls()).filter((c) => c.cmd === "readiness").map((c) => c.args.agent.kind);
    assert.deepEqual(checked, ["claude_code"], "the disabled candidate, never started, is not checked");
  } finally {
    await app.close();
  }
});
