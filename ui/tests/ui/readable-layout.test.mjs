// Issue 30's second outside review: text that reads whole (spaces between
// the parts of a hint, nothing cut off in a field, a long candidate name in
// a dialog title) and layout that holds still (the run form with or without
// its git warning, a section below automatic continuation's switch), at
// desktop width and on a phone (390 px).
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { demoProfile, routeAttempt, routeSnapshot } from "./fixtures.mjs";

const WIDTHS = [1280, 390];

const NOT_GIT = "not a git repository, so what the agent changes there cannot be reviewed or undone with git";

/** The run form with one profile and no route yet (so on a phone it is open). */
const runScenario = () => ({
  profiles: [demoProfile()],
  routes: [],
  workdirs: {
    "": { path: "/home/me", problem: null, warning: NOT_GIT, git_root: null },
    "/tmp/review": { path: "/tmp/review", problem: null, warning: NOT_GIT, git_root: null },
  },
});

const hintText = (page) =>
  page.evaluate(() => document.querySelector("[data-testid=run-cwd-hint]")?.textContent?.replace(/\s+/g, " ").trim());

async function waitForHint(page, part) {
  await page.waitForFunction(
    (p) => document.querySelector("[data-testid=run-cwd-hint]")?.textContent?.includes(p),
    part,
  );
}

test("the directory hint reads with a space between its parts", async () => {
  const app = await openApp(runScenario());
  try {
    await waitForHint(app.page, "/home/me");
    assert.equal(
      await hintText(app.page),
      `Runs in /home/me (Recourse's own directory; set a default in Settings). Warning: ${NOT_GIT}.`,
      "the sentence ends before the warning starts, with a space between them",
    );
    await app.page.getByLabel("Working directory").fill("/tmp/review");
    await waitForHint(app.page, "/tmp/review");
    assert.equal(await hintText(app.page), `Runs in /tmp/review. Warning: ${NOT_GIT}.`);
  } finally {
    await app.close();
  }
});

test("Settings' directory hint reads with a space before the warning", async () => {
  const app = await openApp(runScenario(), { hash: "#/settings" });
  try {
    await app.page.getByLabel("Default working directory").fill("/tmp/review");
    await app.page.waitForFunction(() =>
      document.querySelector("#default-cwd-help")?.textContent?.includes("/tmp/review"),
    );
    const hint = await app.page.evaluate(() =>
      document.querySelector("#default-cwd-help").textContent.replace(/\s+/g, " ").trim(),
    );
    assert.equal(hint, `Used when a run's directory is left empty: now /tmp/review (${NOT_GIT}).`);
  } finally {
    await app.close();
  }
});

for (const width of WIDTHS) {
  test(`at ${width} px the run form keeps its height when the git warning comes and goes`, async () => {
    const app = await openApp(runScenario(), { width });
    try {
      const form = app.page.getByTestId("start-run");
      const start = app.page.getByRole("button", { name: "Start run" });
      await waitForHint(app.page, "Warning:");
      const warned = { form: await form.boundingBox(), start: await start.boundingBox() };
      // The fake's other directories are git repositories: no warning.
      await app.page.getByLabel("Working directory").fill("/srv/repo");
      await waitForHint(app.page, "/srv/repo");
      assert.doesNotMatch(await hintText(app.page), /Warning/);
      const plain = { form: await form.boundingBox(), start: await start.boundingBox() };
      assert.ok(
        Math.abs(plain.form.height - warned.form.height) <= 1,
        `the form is as tall without the warning: ${warned.form.height} then ${plain.form.height}`,
      );
      assert.ok(Math.abs(plain.start.y - warned.start.y) <= 1, "Start run, below the hint, does not move");
    } finally {
      await app.close();
    }
  });

  test(`at ${width} px turning automatic continuation on or off moves nothing below it`, async () => {
    const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles", width });
    try {
      // The Codex row: its CLI resumes its sessions, so the switch is there.
      await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
      const row = app.page.getByTestId("candidate-row").nth(1);
      const transient = row.getByTestId("section-transient");
      const unclassified = row.getByTestId("section-unclassified");
      await transient.getByText("Advanced", { exact: true }).click();
      // Relative to the row: a click may scroll the page, which moves nothing under the pointer.
      const below = async () => (await unclassified.boundingBox()).y - (await row.boundingBox()).y;
      const schedule = transient.getByTestId("schedule-transient");
      await schedule.filter({ hasText: "[backend schedule]" }).waitFor();
      const off = await below();
      const toggle = transient.getByRole("switch", { name: "Continue the agent's session automatically" });
      await toggle.click();
      await schedule.filter({ hasText: "never sent again" }).waitFor();
      const on = await below();
      assert.ok(Math.abs(on - off) <= 2, `the Unclassified section stays: ${off} then ${on}`);
      await toggle.click();
      await app.page.waitForFunction(
        () => !document.querySelector("[data-testid=schedule-transient]")?.textContent?.includes("never sent again"),
      );
      assert.ok(Math.abs((await below()) - off) <= 2, "and stays when it is turned off again");
    } finally {
      await app.close();
    }
  });

  test(`at ${width} px the editor's access choices, account placeholder and continuation message are not cut`, async () => {
    const scenario = { profiles: [demoProfile()] };
    // A candidate saved before access levels: the drop-down has its "not set" choice too.
    scenario.profiles[0].candidates[1].agent.access = null;
    const app = await openApp(scenario, { hash: "#/profiles", width });
    try {
      await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
      const row = app.page.getByTestId("candidate-row").nth(1);
      const cut = await row.evaluate((r) => {
        const canvas = document.createElement("canvas").getContext("2d");
        const inner = (el) => {
          const cs = getComputedStyle(el);
          canvas.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
          return el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
        };
        const found = [];
        const access = r.querySelector("[data-testid=access-field] select");
        // A drop-down cannot wrap: each choice fits beside its arrow (20 px).
        const room = inner(access) - 20;
        for (const o of access.options)
          if (canvas.measureText(o.text).width > room) found.push(`access choice “${o.text}”`);
        const account = r.querySelector("input[id^=account-]");
        if (canvas.measureText(account.placeholder).width > inner(account))
          found.push(`account placeholder “${account.placeholder}”`);
        const message = r.querySelector("[data-testid=continue-message-field] textarea");
        if (message.scrollHeight > message.clientHeight) found.push("continuation message placeholder");
        return found;
      });
      assert.deepEqual(cut, [], "nothing is cut off");
    } finally {
      await app.close();
    }
  });
}

test("on a desktop the directory hint's reserved lines hold text, not a blank hole", async () => {
  const app = await openApp(runScenario(), { width: 1280 });
  try {
    await app.page.getByLabel("Working directory").fill("/srv/repo");
    await waitForHint(app.page, "/srv/repo");
    assert.equal(
      (await app.page.getByTestId("run-cwd-about").textContent()).trim(),
      "In the git repository /srv/repo: what the agent changes can be reviewed and undone with git.",
      "no warning: a quiet line on the directory takes its place",
    );
    const [filled, reserved] = await app.page
      .getByTestId("run-cwd-hint")
      .evaluate((h) => [
        [...h.children].reduce((sum, c) => sum + c.getBoundingClientRect().height, 0),
        h.getBoundingClientRect().height,
      ]);
    const line = await app.page
      .getByTestId("run-cwd-about")
      .evaluate((e) => parseFloat(getComputedStyle(e).lineHeight));
    assert.ok(
      reserved - filled < line,
      `at most part of a line is left blank under the hint: ${filled.toFixed(1)} of ${reserved.toFixed(1)} px`,
    );
  } finally {
    await app.close();
  }
});

/** A route held for a person, with both Continue and Skip with context offered, between long demo-style names. */
const continuable = {
  routes: [
    {
      snapshot: routeSnapshot(8, "needs_manual", {
        actions: ["retry_now", "skip_now", "stop", "continue", "handover"],
        repeat_risk: "a tool was run before the failure",
      }),
      attempts: [routeAttempt(1)],
    },
  ],
  continuations: {
    8: {
      continue_offer: {
        of_attempt: 1,
        session_id: "00000000-0000-4000-8000-000000000001",
        candidate_name: "Claude Code (simulated): usage limit, then overloaded",
        message: "Continue the task where you stopped. ".repeat(8).trim(),
      },
      continue_refused: null,
      handover: {
        from_attempt: 1,
        to_candidate: "Codex (simulated): a tool ran, then the stream dropped",
        package: "----- BEGIN REFERENCE DATA FROM A PREVIOUS ATTEMPT (untrusted) -----",
      },
      handover_refused: null,
    },
  },
};

test("a dialog names a candidate in quotes, so a long name with a colon reads as one name", async () => {
  const app = await openApp(continuable);
  const { page } = app;
  try {
    await page.locator('[data-route="8"]').click();
    const dialog = page.getByTestId("continuation-dialog");
    await page.locator('[data-testid=route-detail] button[data-action="handover"]').click();
    assert.equal(
      await dialog.locator("h2").innerText(),
      "Skip route 8 with context to “Codex (simulated): a tool ran, then the stream dropped”?",
    );
    assert.match(await dialog.innerText(), /“Codex \(simulated\): a tool ran, then the stream dropped” starts a fresh/);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await page.locator('[data-testid=route-detail] button[data-action="continue"]').click();
    assert.match(
      await dialog.innerText(),
      /The session 00000000-0000-4000-8000-000000000001 of “Claude Code \(simulated\): usage limit, then overloaded” is resumed/,
      "not “…overloaded's own session”",
    );
  } finally {
    await app.close();
  }
});

test("at 390 px the Continue dialog's message is shown whole, not cut to four lines", async () => {
  const app = await openApp(continuable, { width: 390, height: 844 });
  const { page } = app;
  try {
    await page.locator('[data-route="8"]').click();
    await page.locator('[data-testid=route-detail] button[data-action="continue"]').click();
    const message = page.getByTestId("continue-message");
    await message.waitFor();
    const [scroll, client] = await message.evaluate((t) => [t.scrollHeight, t.clientHeight]);
    assert.ok(scroll <= client, `the field is as tall as its text: ${scroll} > ${client}`);
  } finally {
    await app.close();
  }
});

test("an announcement goes once it has been said: adding a candidate leaves no stale words behind", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  const announcer = app.page.getByTestId("announcer");
  try {
    // The page's timers from here on run on a clock the test moves.
    await app.page.clock.install();
    await app.page.getByRole("button", { name: "+ Add candidate" }).click();
    await app.page.getByLabel("Add a candidate: search agent kinds").fill("any command");
    await app.page.keyboard.press("Enter");
    await app.page.clock.runFor(1000);
    await announcer.filter({ hasText: "added at position 3" }).waitFor({ state: "attached" });
    await app.page.clock.runFor(10_000);
    assert.equal(
      await announcer.textContent(),
      "",
      "said and read: a screen reader later finds no old message in the live region",
    );
  } finally {
    await app.close();
  }
});

test("moving or removing a candidate is announced with its name in quotes", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  const announcer = app.page.getByTestId("announcer");
  try {
    await app.page.getByRole("button", { name: "Move Claude (simulated) down" }).click();
    await announcer.filter({ hasText: "moved" }).waitFor({ state: "attached" });
    assert.equal(await announcer.textContent(), "“Claude (simulated)” moved to position 2");
    await app.page.getByRole("button", { name: "Remove Codex" }).click();
    await announcer.filter({ hasText: "removed" }).waitFor({ state: "attached" });
    assert.equal(await announcer.textContent(), "“Codex” removed (not saved yet)");
  } finally {
    await app.close();
  }
});

/** The characters each line of `locator`'s text starts with after the first: where it broke. */
const breaksOf = (locator) =>
  locator.evaluate((el) => {
    const breaks = [];
    let [prev, lastTop] = ["", null];
    const chars = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    while (chars.nextNode()) {
      const node = chars.currentNode;
      for (let i = 0; i < node.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const top = Math.round(range.getBoundingClientRect().top);
        if (lastTop !== null && top > lastTop) breaks.push(`${prev}|${node.data[i]}`);
        [prev, lastTop] = [node.data[i], top];
      }
    }
    return breaks;
  });

test("Settings' database and logs paths break only after a separator on a phone, never inside a name", async () => {
  const home = "/home/someone-with-a-long-name/.local/share/recourse-desktop";
  const app = await openApp(
    { appInfo: { db_path: `${home}/recourse-routes.sqlite3`, log_dir: `${home}/logs/diagnostics` } },
    { width: 390, height: 844, hash: "#/settings" },
  );
  try {
    for (const id of ["db-path", "log-dir"]) {
      const path = app.page.getByTestId(id);
      await path.filter({ hasText: "someone" }).waitFor();
      const breaks = await breaksOf(path);
      assert.ok(breaks.length > 0, `${id}: the case in question, a path longer than the phone's line`);
      for (const at of breaks) assert.equal(at[0], "/", `${id} broke at ${at}: inside a name, which reads as two`);
    }
  } finally {
    await app.close();
  }
});
