// Messages have their places before they show (issue 30, item 5, after the
// third outside review): the run form's refusals take their field's hint
// line and go when the field changes; the profile editor's refused save
// leaves room to scroll everything above it; Settings' directory hint and
// the Create rule dialog's live message keep their lines; a dialog's buttons
// stay on screen; Check sits with the program it checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, at, openApp } from "./lib.mjs";
import { demoProfile, routeAttempt, routeSnapshot } from "./fixtures.mjs";

const iso = (msFromNow) => new Date(Date.now() + msFromNow).toISOString();

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

    const long = `/x/${"averylongfoldername".repeat(8)}`;
    await form.getByLabel("Working directory").fill(long);
    await form.getByTestId("run-cwd-hint").filter({ hasText: "averylong" }).waitFor();
    const overflow = await form.getByTestId("run-cwd-hint").evaluate((e) => e.scrollWidth - e.clientWidth);
    assert.ok(overflow <= 0, `a long path wraps inside the form, not ${overflow} px past its edge`);

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

const NOT_GIT = "not a git repository, so what the agent changes there cannot be reviewed or undone with git";

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
      const hint = app.page.locator("#default-cwd-help");
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

/** Is every button of the dialog's action row on screen and not covered? */
const actionsReachable = (dialog) =>
  dialog.locator(".actions button").evaluateAll((buttons) =>
    buttons.map((b) => {
      const r = b.getBoundingClientRect();
      const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
      return {
        text: b.textContent.trim(),
        onScreen: r.top >= 0 && r.bottom <= window.innerHeight,
        uncovered: hit === b || b.contains(hit),
      };
    }),
  );

const handoverRoute = {
  snapshot: routeSnapshot(8, "needs_manual", {
    actions: ["retry_now", "skip_now", "stop", "handover"],
    repeat_risk: "a tool was run before the failure",
  }),
  attempts: [routeAttempt(1)],
};
const longPackage = Array.from({ length: 60 }, (_, i) => `- Bash step ${i} — completed`).join("\n");

for (const [label, viewport] of [
  ["phone", { width: 390, height: 640 }],
  ["short window", { width: 1280, height: 500 }],
]) {
  test(`a dialog taller than the window keeps Cancel and its confirm button on screen (${label})`, async () => {
    const app = await openApp(
      {
        routes: [handoverRoute],
        continuations: {
          8: {
            continue_offer: null,
            continue_refused: "no session",
            handover: { from_attempt: 1, to_candidate: "Codex", package: longPackage },
            handover_refused: null,
          },
        },
      },
      viewport,
    );
    try {
      await app.page.locator('[data-route="8"]').click();
      await app.page.locator('[data-testid=route-detail] button[data-action="handover"]').click();
      const dialog = app.page.getByTestId("continuation-dialog");
      await dialog.waitFor();
      const tall = await dialog.evaluate((d) => d.scrollHeight > d.clientHeight);
      assert.ok(tall, "the case in question: the dialog's content is taller than the window");
      for (const button of await actionsReachable(dialog))
        assert.deepEqual(button, { text: button.text, onScreen: true, uncovered: true }, "without scrolling");
      await dialog.evaluate((d) => d.scrollBy(0, 200));
      for (const button of await actionsReachable(dialog))
        assert.deepEqual(button, { text: button.text, onScreen: true, uncovered: true }, "and after some");
    } finally {
      await app.close();
    }
  });
}

/** Controls of the editor the save message covers, with main scrolled to its end. */
const coveredAtEnd = (page) =>
  page.evaluate(() => {
    const main = document.querySelector("main");
    main.scrollTop = main.scrollHeight;
    const message = document.querySelector("[data-testid=save-message]").getBoundingClientRect();
    return [...document.querySelectorAll(".editor button, .editor input, .editor select, .editor textarea")]
      .filter((el) => !el.closest(".savebar") && el.getClientRects().length > 0)
      .filter((el) => {
        const r = el.getBoundingClientRect();
        return r.bottom > message.top && r.top < message.bottom;
      })
      .map((el) => (el.textContent || el.getAttribute("aria-label") || el.id).trim());
  });

for (const [label, viewport] of VIEWPORTS) {
  for (const long of [false, true]) {
    test(`a refused save's message leaves every control of the editor reachable, and moves nothing (${label}, ${long ? "long" : "short"} profile)`, async () => {
      const profile = demoProfile();
      if (long)
        for (let i = 0; i < 4; i++)
          profile.candidates.push({ ...profile.candidates[1], id: 30 + i, name: `Extra ${i}` });
      const refusal = {
        code: "validation",
        message: "Candidate 1 › Transient › First delay: must be at most 1 h (2 h is too long)",
        fields: [{ path: "candidates[0].policy.transient.retry.initial_interval_seconds", message: "must be 1–3600" }],
      };
      const app = await openApp(
        { profiles: [profile], failNext: { save_candidates: refusal } },
        { ...viewport, hash: "#/profiles" },
      );
      try {
        const row = app.page.getByTestId("candidate-row").first();
        await row.getByRole("button", { name: "Edit policy" }).click();
        await row.getByTestId("section-transient").getByLabel("Retries", { exact: true }).fill("4");
        const save = app.page.getByRole("button", { name: "Save", exact: true });
        const add = app.page.getByRole("button", { name: "+ Add candidate" });
        await app.page.evaluate(() => {
          const main = document.querySelector("main");
          main.scrollTop = main.scrollHeight;
        });
        const [saveBefore, addBefore] = [await at(save), await at(add)];
        await save.click();
        await app.page.getByTestId("save-message").getByText("Not saved:", { exact: false }).waitFor();
        assert.deepEqual(await at(save), saveBefore, "Save stays under the pointer that pressed it");
        assert.deepEqual(await at(add), addBefore, "room is made below what is on screen, not above it");
        assert.deepEqual(await coveredAtEnd(app.page), [], "scrolled to the end, nothing is under the message");
      } finally {
        await app.close();
      }
    });
  }
}
