// Messages have their places before they show (issue 30, item 5, after the
// third outside review): the run form's refusals take their field's hint
// line and go when the field changes; the profile editor's refused save
// leaves room to scroll everything above it; Settings' directory hint and
// the Create rule dialog's live message keep their lines; a dialog's buttons
// stay on screen; Check sits with the program it checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { demoProfile } from "./fixtures.mjs";

const VIEWPORTS = [
  ["desktop", { width: 1280, height: 820 }],
  ["phone", { width: 390, height: 844 }],
];

const iso = (msFromNow) => new Date(Date.now() + msFromNow).toISOString();

/** A viewport box, rounded: where a control is under the pointer. */
const at = async (locator) => {
  const { x, y, width, height } = await locator.boundingBox();
  return { x: Math.round(x), y: Math.round(y), width: Math.round(width), height: Math.round(height) };
};

const oneProfile = {
  profiles: [{ id: 1, name: "Everyday", revision: 1, candidates: [], created_at: iso(0), updated_at: iso(0) }],
};

test("a refused Start run says each field's problem once, in its hint's place, and it goes when the field changes", async () => {
  const app = await openApp({
    ...oneProfile,
    workdirs: { "/x/nope": { path: "/x/nope", problem: "/x/nope does not exist", warning: null, git_root: null } },
    failNext: {
      start_run: {
        code: "validation",
        message: "invalid request",
        fields: [{ path: "cwd", message: "/x/nope does not exist" }],
      },
    },
  });
  try {
    const form = app.page.getByTestId("start-run");
    const start = form.getByRole("button", { name: "Start run" });
    const said = () => form.getByText("does not exist").count();
    await app.page.waitForFunction(() => document.querySelector("#run-profile")?.value === "1");

    // An empty prompt: its error takes the help's place, Start run stays.
    const before = await at(start);
    await start.click();
    await form.getByText("Write the prompt for the agent.").waitFor();
    assert.deepEqual(await at(start), before, "the prompt's error had its place: Start run stays under the pointer");
    await form.getByLabel("Prompt").fill("go");
    await form.getByText("Write the prompt for the agent.").waitFor({ state: "detached" });

    await form.getByLabel("Working directory").fill("/x/nope");
    await form.getByTestId("run-cwd-error").waitFor();
    const typed = await at(start);
    await start.click();
    await app.page.waitForFunction(() => window.__CALLS__.some((c) => c.cmd === "start_run"));
    await app.page.waitForTimeout(100);
    assert.equal(await said(), 1, "the refusal says what the live check says already: one line, not two");
    assert.deepEqual(await at(start), typed, "the refusal takes the hint's place: Start run does not move");

    await form.getByLabel("Working directory").fill("");
    await form.getByTestId("run-cwd-hint").filter({ hasText: "Runs in /home/me" }).waitFor();
    assert.equal(await said(), 0, "the refusal was about /x/nope: it goes with it");
    assert.equal(await form.getByLabel("Working directory").getAttribute("aria-invalid"), null);
    assert.deepEqual(await at(start), typed, "and Start run is still where it was");
  } finally {
    await app.close();
  }
});

for (const [label, viewport] of VIEWPORTS) {
  test(`Check sits beside the Program field it checks, not beside Access (${label})`, async () => {
    const app = await openApp({ profiles: [demoProfile()] }, { ...viewport, hash: "#/profiles" });
    try {
      const codex = app.page.getByTestId("candidate-row").nth(1);
      await codex.getByRole("button", { name: "Edit policy" }).click();
      const program = await at(codex.getByLabel("Program"));
      const check = await at(codex.getByRole("button", { name: "Check" }));
      const access = await at(codex.getByLabel("Access"));
      assert.ok(
        Math.abs(check.y + check.height / 2 - (program.y + program.height / 2)) <= 2,
        `on the program's line: ${JSON.stringify({ program, check })}`,
      );
      assert.ok(check.x >= program.x + program.width, "right after the program it checks");
      assert.ok(
        access.y > check.y || access.x >= check.x + check.width,
        `Access comes after it: ${JSON.stringify({ check, access })}`,
      );
    } finally {
      await app.close();
    }
  });
}

const NOT_GIT = "not a git repository: what the agent changes there cannot be reviewed or undone with git";

for (const [label, viewport] of VIEWPORTS) {
  test(`typing Settings' default directory moves none of the sections below (${label})`, async () => {
    const app = await openApp(
      {
        ...oneProfile,
        workdirs: {
          "": { path: "/home/me", problem: null, warning: NOT_GIT, git_root: null },
          "/t": { path: "/t", problem: "/t does not exist", warning: null, git_root: null },
          "/tmp/review": { path: "/tmp/review", problem: null, warning: NOT_GIT, git_root: null },
        },
      },
      { ...viewport, hash: "#/settings" },
    );
    try {
      const hint = app.page.getByTestId("default-cwd-hint");
      const notify = app.page.getByTestId("settings-notify");
      await hint.filter({ hasText: "/home/me (not a git repository" }).waitFor();
      const before = await at(notify);
      const field = app.page.getByLabel("Default working directory");
      await field.fill("/t");
      await hint.filter({ hasText: /left empty\.\s*$/ }).waitFor();
      assert.deepEqual(await at(notify), before, "the hint kept its lines while it had less to say");
      await field.fill("/tmp/review");
      await hint.filter({ hasText: "/tmp/review (not a git repository" }).waitFor();
      assert.deepEqual(await at(notify), before, "and the warning fits in them");
    } finally {
      await app.close();
    }
  });
}
