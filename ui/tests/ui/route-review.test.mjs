// The Routes area as issue 30 (an outside review) and the manual-action rules
// of issue 27 ask: actions that never move and never double, retries not
// pushed when they would fail, the working directory everywhere, the
// timeline, run again, archive and delete, links to the inbox and back,
// keyboard paths, and one time format.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, openApp } from "./lib.mjs";
import { routeAttempt, routeSnapshot } from "./fixtures.mjs";

const iso = (msFromNow) => new Date(Date.now() + msFromNow).toISOString();

const snapshot = (id, state, extra = {}) => routeSnapshot(id, state, { candidate_count: 2, ...extra });

const attempt = routeAttempt;

const routesOf = (...details) => ({
  profiles: [
    {
      id: 1,
      name: "Everyday",
      revision: 1,
      candidates: [],
      created_at: iso(-864e5),
      updated_at: iso(-864e5),
    },
  ],
  routes: details,
});

const row = (page, id) => page.locator(`[data-route="${id}"]`);
const detailOf = (page) => page.locator("[data-testid=route-detail]");

/** Where each action button is drawn, by action. */
function positions(page) {
  return page.locator("[data-testid=route-detail] button[data-action]").evaluateAll((els) =>
    Object.fromEntries(
      els.map((b) => {
        const r = b.getBoundingClientRect();
        return [b.dataset.action, [Math.round(r.x), Math.round(r.y - b.closest("section").getBoundingClientRect().y)]];
      }),
    ),
  );
}

test("every action keeps its place from state to state, and after Stop the button under the pointer is not Resume", async () => {
  const app = await openApp(
    routesOf(
      { snapshot: snapshot(4, "running", { actions: ["stop"] }), attempts: [attempt(1, { outcome: null })] },
      {
        snapshot: snapshot(6, "retry_scheduled", { actions: ["retry_now", "skip_now", "cancel_wait", "stop"] }),
        attempts: [],
      },
      { snapshot: snapshot(2, "stopped", { actions: ["resume"] }), attempts: [] },
    ),
  );
  const detail = detailOf(app.page);
  try {
    const seen = [];
    for (const id of [4, 6, 2]) {
      await row(app.page, id).click();
      await detail.getByRole("heading", { name: `Route ${id}` }).waitFor();
      seen.push(await positions(app.page));
    }
    assert.deepEqual(seen[1], seen[0], "a waiting route's buttons sit where a running route's do");
    assert.deepEqual(seen[2], seen[0], "and a stopped route's too");
    assert.notDeepEqual(seen[0].stop, seen[0].resume, "Resume has its own place, never Stop's");

    await row(app.page, 4).click();
    await detail.getByRole("heading", { name: "Route 4" }).waitFor();
    const stop = detail.getByRole("button", { name: "Stop" });
    const box = await stop.boundingBox();
    await stop.click();
    await app.page.getByRole("dialog").getByRole("button", { name: "Stop the agent" }).click();
    await detail.locator(".badge.state-stopped").waitFor();
    const under = await app.page.evaluate(
      ([x, y]) => document.elementFromPoint(x, y)?.closest("button")?.dataset.action ?? null,
      [box.x + box.width / 2, box.y + box.height / 2],
    );
    assert.equal(under, "stop", "the stopped route's Stop (disabled) is under the pointer, not Resume");
    assert.equal(await detail.locator("button[data-action=stop]").isDisabled(), true);
  } finally {
    await app.close();
  }
});

for (const [label, viewport] of VIEWPORTS) {
  test(`run again, archive, delete and every action keep their place as one route waits, needs you and succeeds (${label})`, async () => {
    const reset = iso(30 * 60e3);
    const waiting = snapshot(7, "waiting_reset", {
      provider_reset_at: reset,
      deadline: reset,
      actions: ["retry_now", "skip_now", "cancel_wait", "stop"],
    });
    const app = await openApp(routesOf({ snapshot: waiting, attempts: [attempt(1)] }), viewport);
    const detail = detailOf(app.page);
    const controls = [
      detail.getByTestId("run-again"),
      detail.getByTestId("archive-route"),
      detail.getByTestId("delete-route"),
      ...["retry_now", "skip_now", "cancel_wait", "stop", "resume", "continue", "handover"].map((a) =>
        detail.locator(`button[data-action="${a}"]`),
      ),
    ];
    // Relative to the detail: the panel as a whole may slide with the list beside it, which is not this test's subject.
    const where = async () => {
      const origin = await detail.boundingBox();
      return Promise.all(
        controls.map(async (c) => {
          const b = await c.boundingBox();
          return [b.x - origin.x, b.y - origin.y, b.width, b.height].map(Math.round);
        }),
      );
    };
    /** The route moves on as the engine would tell the window. */
    const step = async (patch) => {
      const next = await app.page.evaluate(([p]) => window.__BACKEND__.revise(7, p), [patch]);
      await app.emit("route-changed", { route_id: 7, generation: next.generation, snapshot: next });
      await detail.locator(`.badge.state-${next.state}`).waitFor();
      return next;
    };
    try {
      await row(app.page, 7).click();
      await detail.getByRole("heading", { name: "Route 7" }).waitFor();
      const before = await where();
      const needsYou = { state: "needs_manual", deadline: null, actions: ["retry_now", "skip_now", "stop"] };
      await step({
        ...needsYou,
        manual_reason: "wait cancelled by you; retry now, skip to the next candidate, or stop",
      });
      await detail.getByTestId("provider-reset").waitFor();
      assert.deepEqual(await where(), before, "the wait cancelled, the reset's notice shows: nothing moved");
      await step({ provider_reset_at: iso(-1000) });
      await detail.getByTestId("provider-reset").waitFor({ state: "detached" });
      assert.deepEqual(await where(), before, "the reset passed, its notice went: nothing moved");
      await step({
        manual_reason: "the failure matched no catalogue rule; retry now, skip to the next candidate, or stop",
        provider_reset_at: null,
      });
      assert.deepEqual(await where(), before, "another reason to need you: nothing moved");
      await step({ state: "succeeded", manual_reason: null, actions: [] });
      assert.deepEqual(await where(), before, "succeeded: every button is still drawn where it was");
      for (const action of ["retry_now", "stop"])
        assert.match(
          (await detail.locator(`button[data-action="${action}"]`).getAttribute("title")) ?? "",
          /succeeded/,
          "a greyed-out action says why, as on any other state",
        );
    } finally {
      await app.close();
    }
  });
}

test("a double click runs one action, and Stop on a running agent asks first", async () => {
  const app = await openApp(
    routesOf(
      {
        snapshot: snapshot(6, "retry_scheduled", { actions: ["retry_now", "skip_now", "cancel_wait", "stop"] }),
        attempts: [],
      },
      { snapshot: snapshot(4, "running", { actions: ["stop"] }), attempts: [] },
    ),
  );
  const detail = detailOf(app.page);
  try {
    await row(app.page, 6).click();
    await detail.getByRole("button", { name: "Retry now" }).dblclick();
    await detail.locator(".badge.state-running").waitFor();
    await app.page.waitForTimeout(300);
    const sent = (await app.calls()).filter((c) => c.cmd === "route_action").map((c) => c.args.request.action);
    assert.deepEqual(sent, ["retry_now"], "the second click of the double click did nothing");

    await row(app.page, 4).click();
    await detail.getByRole("heading", { name: "Route 4" }).waitFor();
    await detail.getByRole("button", { name: "Stop" }).click();
    const ask = app.page.getByRole("dialog", { name: "Stop the agent running route 4?" });
    await ask.waitFor();
    assert.match(await ask.textContent(), /Resume later sends the prompt to the current candidate again/);
    await ask.getByRole("button", { name: "Cancel" }).click();
    const after = (await app.calls()).filter((c) => c.cmd === "route_action").length;
    assert.equal(after, 1, "cancelled: the agent keeps running");
  } finally {
    await app.close();
  }
});

test("Retry now is not pushed while the provider's reset is ahead or the program cannot start, and the cause leads", async () => {
  const app = await openApp(
    routesOf(
      {
        snapshot: snapshot(8, "needs_manual", {
          manual_reason: "wait cancelled by you; retry now, skip to the next candidate, or stop",
          provider_reset_at: iso(30 * 60e3),
          actions: ["retry_now", "skip_now", "stop"],
        }),
        attempts: [],
      },
      {
        snapshot: snapshot(9, "needs_manual", {
          manual_reason:
            "cannot start claude: not found on PATH. Install the program or set the candidate's Program to its full path (Profiles), or fix the working directory; then retry now, or skip to the next candidate",
          cannot_start: true,
          actions: ["retry_now", "skip_now", "stop"],
        }),
        attempts: [],
      },
    ),
  );
  const detail = detailOf(app.page);
  const primaries = () => detail.locator("button.primary[data-action]").allTextContents();
  try {
    await row(app.page, 8).click();
    await detail.getByRole("heading", { name: "Route 8" }).waitFor();
    assert.deepEqual(await primaries(), ["Skip now"], "a retry before the reset would fail again");
    assert.match(
      (await detail.getByTestId("provider-reset").textContent()).replace(/\s+/g, " "),
      /The provider's limit resets at .* \(in (29|30) min( \d+ s)?\): a retry of Claude before then will most likely fail again\./,
      "the reset is still shown after the wait was cancelled",
    );
    assert.match(await detail.locator("#action-hint-retry_now").textContent(), /resets at/);
    await row(app.page, 9).click();
    await detail.getByRole("heading", { name: "Route 9" }).waitFor();
    assert.deepEqual(await primaries(), ["Skip now"]);
    assert.match(
      await detail.getByTestId("detail-manual-reason").textContent(),
      /^\s*Needs you:\s*cannot start claude: not found on PATH/,
      "the readable cause comes first",
    );
    assert.match(await detail.locator("#action-hint-retry_now").textContent(), /fails the same way until/);
  } finally {
    await app.close();
  }
});

test("the directory is said before a run and shown on every route and attempt, with the exit code", async () => {
  const app = await openApp({
    ...routesOf({
      snapshot: snapshot(5, "needs_manual", { cwd: "/srv/app", actions: ["retry_now", "stop"] }),
      attempts: [attempt(1, { exit_code: 127 })],
    }),
    workdirs: {
      "": {
        path: "/home/me",
        problem: null,
        warning: "not a git repository, so what the agent changes there cannot be reviewed or undone with git",
        git_root: null,
      },
      "/nope": { path: "/nope", problem: "/nope does not exist", warning: null, git_root: null },
      "/etc/passwd": {
        path: "/etc/passwd",
        problem: "/etc/passwd is a file, not a directory",
        warning: null,
        git_root: null,
      },
    },
  });
  try {
    const hint = app.page.getByTestId("run-cwd-hint");
    await app.page.waitForFunction(() =>
      document.querySelector("[data-testid=run-cwd-hint]")?.textContent?.includes("/home/me"),
    );
    assert.match(
      await hint.textContent(),
      /Runs in \/home\/me \(Recourse's own directory; set a default in Settings\)\.\s*Warning: not a git repository/,
    );
    await app.page.getByLabel("Working directory").fill("/etc/passwd");
    await app.page.waitForFunction(() =>
      document.querySelector("[data-testid=run-cwd-hint]")?.textContent?.includes("is a file"),
    );
    assert.equal(
      (await app.page.getByTestId("run-cwd-about").textContent()).trim(),
      "Start run needs a directory that exists; empty the field to use the default.",
      "true of a file that exists too: it never waits for “the directory” to exist",
    );
    await app.page.getByLabel("Working directory").fill("/nope");
    await app.page.waitForFunction(() =>
      document.querySelector("[data-testid=run-cwd-hint]")?.textContent?.includes("does not exist"),
    );
    assert.match(await row(app.page, 5).textContent(), /\/srv\/app/, "the list row says where it ran");
    await row(app.page, 5).click();
    const detail = detailOf(app.page);
    assert.equal((await detail.getByTestId("route-cwd").textContent()).trim(), "/srv/app");
    await detail.getByTestId("attempt").waitFor();
    assert.match(await detail.getByTestId("attempt").textContent(), /Directory\s*\/srv\/app/);
    assert.equal(await detail.getByTestId("attempt-exit-code").textContent(), "127");
  } finally {
    await app.close();
  }
});

test("what was typed in the run form survives a visit to another area, and Settings' defaults fill it", async () => {
  const app = await openApp({
    ...routesOf(),
    profiles: [
      { id: 1, name: "Everyday", revision: 1, candidates: [], created_at: iso(0), updated_at: iso(0) },
      { id: 2, name: "Nightly", revision: 1, candidates: [], created_at: iso(0), updated_at: iso(0) },
    ],
    settings: { default_profile: 2, default_cwd: "/srv/repo" },
  });
  try {
    await app.page.waitForFunction(() => document.querySelector("#run-profile")?.value === "2");
    assert.equal(await app.page.getByLabel("Working directory").inputValue(), "/srv/repo");
    await app.page.getByLabel("Profile").selectOption("1");
    await app.page.getByLabel("Prompt").fill("half-written prompt");
    await app.page.getByRole("link", { name: "Profiles" }).click();
    await app.page.getByRole("link", { name: "Routes" }).click();
    assert.equal(await app.page.getByLabel("Prompt").inputValue(), "half-written prompt");
    assert.equal(await app.page.getByLabel("Profile").inputValue(), "1", "the person's choice, not the default");
  } finally {
    await app.close();
  }
});

test("an empty directory field runs in Settings' default, and says so", async () => {
  const app = await openApp({
    ...routesOf(),
    profiles: [{ id: 1, name: "Everyday", revision: 1, candidates: [], created_at: iso(0), updated_at: iso(0) }],
    settings: { default_cwd: "/srv/repo" },
  });
  try {
    const field = app.page.getByLabel("Working directory");
    await app.page.waitForFunction(() => document.querySelector("#run-cwd")?.value === "/srv/repo");
    await field.fill("");
    await app.page.getByTestId("run-cwd-hint").filter({ hasText: "(the default from Settings)" }).waitFor();
    await app.page.getByLabel("Prompt").fill("go");
    await app.page.getByRole("button", { name: "Start run" }).click();
    await app.page.waitForFunction(() => window.__CALLS__.some((c) => c.cmd === "start_run"));
    const sent = (await app.calls()).find((c) => c.cmd === "start_run").args;
    assert.equal(sent.request.cwd, "/srv/repo", "the default, not Recourse's own directory");
  } finally {
    await app.close();
  }
});

test("a decision's instants are written like every other time", async () => {
  const app = await openApp(
    routesOf({
      snapshot: snapshot(3, "needs_manual", { actions: ["stop"] }),
      attempts: [attempt(1, { decision: "transient retry 1 of 3 in 5 s, at 2026-12-04T17:25:03Z" })],
    }),
  );
  try {
    await row(app.page, 3).click();
    const decision = await detailOf(app.page).getByTestId("attempt-decision").textContent();
    const shown = await app.page.evaluate(() =>
      new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" }).format(
        new Date("2026-12-04T17:25:03Z"),
      ),
    );
    assert.equal(
      decision,
      `Transient retry 1 of 3 in 5 s, at ${shown}`,
      "no raw RFC 3339 left; standing alone, it starts upper-case",
    );
  } finally {
    await app.close();
  }
});

test("choosing a route puts keyboard focus in its detail, its actions a Tab away", async () => {
  const many = Array.from({ length: 12 }, (_, i) => ({
    snapshot: snapshot(20 + i, "needs_manual", { actions: ["retry_now", "skip_now", "stop"] }),
    attempts: [],
  }));
  const app = await openApp(routesOf(...many));
  try {
    await row(app.page, 31).focus();
    await app.page.keyboard.press("Enter");
    await app.page.waitForFunction(() => document.activeElement?.id === "detail-heading");
    let action = null;
    for (let i = 0; i < 4 && !action; i++) {
      await app.page.keyboard.press("Tab");
      action = await app.page.evaluate(() => document.activeElement?.getAttribute("data-action"));
    }
    assert.equal(action, "retry_now", "not through the eleven other routes first");
    await app.page.keyboard.press("Tab");
    await app.page.keyboard.press("Enter");
    await detailOf(app.page).locator(".badge.state-running").waitFor();
    await app.page.waitForFunction(() => document.activeElement?.id === "detail-heading");
    assert.notEqual(
      await app.page.evaluate(() => document.activeElement?.getAttribute("data-action")),
      "stop",
      "after Skip now focus is not left on Stop",
    );
  } finally {
    await app.close();
  }
});

test("the focus ring of a top tab is drawn whole", async () => {
  for (const width of [1280, 390]) {
    const app = await openApp({}, { width, height: 844 });
    try {
      await app.page.keyboard.press("Tab");
      const { ring, strip } = await app.page.evaluate(() => {
        const tab = document.activeElement;
        const s = getComputedStyle(tab);
        const grow = parseFloat(s.outlineWidth) + parseFloat(s.outlineOffset);
        const r = tab.getBoundingClientRect();
        const n = tab.closest("nav").getBoundingClientRect();
        return {
          ring: { top: r.top - grow, bottom: r.bottom + grow, left: r.left - grow },
          strip: { top: n.top, bottom: n.bottom, left: n.left },
          focused: tab.className,
        };
      });
      assert.ok(
        ring.top >= strip.top && ring.bottom <= strip.bottom && ring.left >= strip.left,
        `at ${width} px the ring stays inside the tab strip that clips it: ${JSON.stringify({ ring, strip })}`,
      );
    } finally {
      await app.close();
    }
  }
});

test("archiving a route that still needs you asks first, and cancel keeps it", async () => {
  const app = await openApp(routesOf({ snapshot: snapshot(5, "needs_manual", { actions: ["stop"] }), attempts: [] }));
  const detail = detailOf(app.page);
  try {
    await row(app.page, 5).click();
    await detail.getByTestId("archive-route").click();
    const ask = app.page.getByRole("dialog", { name: "Archive route 5?" });
    await ask.getByText("still needs you").waitFor();
    await ask.getByRole("button", { name: "Cancel" }).click();
    assert.ok(!(await app.calls()).some((c) => c.cmd === "archive_route"), "nothing archived without a yes");
    await detail.getByTestId("archive-route").click();
    await ask.getByRole("button", { name: "Archive route" }).click();
    await row(app.page, 5).waitFor({ state: "detached" });
  } finally {
    await app.close();
  }
});

test("a route at rest can be archived, found under Archived, and deleted after confirming", async () => {
  const app = await openApp(
    routesOf(
      { snapshot: snapshot(3, "succeeded"), attempts: [] },
      { snapshot: snapshot(4, "running", { actions: ["stop"] }), attempts: [] },
    ),
  );
  const detail = detailOf(app.page);
  try {
    await row(app.page, 4).click();
    assert.equal(await detail.getByTestId("archive-route").isDisabled(), true, "not while it runs");
    await row(app.page, 3).click();
    await detail.getByTestId("archive-route").click();
    await row(app.page, 3).waitFor({ state: "detached" });
    await app.page.waitForFunction(
      () => document.querySelector("[data-testid=filter-archived]")?.textContent?.trim() === "Archived 1",
    );
    await app.page.getByTestId("filter-archived").click();
    await row(app.page, 3).click();
    await detail.getByTestId("archived-badge").waitFor();
    await detail.getByTestId("delete-route").click();
    const ask = app.page.getByRole("dialog", { name: "Delete route 3?" });
    await ask.getByRole("button", { name: "Cancel" }).click();
    assert.ok(!(await app.calls()).some((c) => c.cmd === "delete_routes"), "nothing deleted without a yes");
    await detail.getByTestId("delete-route").click();
    await ask.getByRole("button", { name: "Delete route" }).click();
    await row(app.page, 3).waitFor({ state: "detached" });
    assert.deepEqual(
      (await app.calls()).filter((c) => c.cmd === "delete_routes").map((c) => c.args.ids),
      [[3]],
    );
  } finally {
    await app.close();
  }
});

test("run again fills the form with the route's profile, whole prompt and directory, ready to edit", async () => {
  const app = await openApp(
    routesOf({
      snapshot: snapshot(3, "succeeded", { cwd: "/srv/app" }),
      attempts: [],
      prompt: "Fix the flaky test in module 3\nand explain why it flaked",
      profile_id: 1,
    }),
  );
  try {
    await row(app.page, 3).click();
    await detailOf(app.page).getByTestId("run-again").click();
    await app.page.waitForFunction(() => document.activeElement?.id === "run-prompt");
    assert.equal(
      await app.page.getByLabel("Prompt").inputValue(),
      "Fix the flaky test in module 3\nand explain why it flaked",
    );
    assert.equal(await app.page.getByLabel("Profile").inputValue(), "1");
    assert.equal(await app.page.getByLabel("Working directory").inputValue(), "/srv/app");
  } finally {
    await app.close();
  }
});

/** Route 7 whose second attempt is in the inbox. */
function inboxScenario() {
  const evidence = {
    provider: "codex",
    message: "the gizmo jammed",
    truncated: false,
    phase: "exit",
    http_status: null,
    headers: {},
    error_type: null,
    exit_code: 1,
    occurred_at: iso(-60e3),
    correlation: null,
  };
  return {
    ...routesOf({
      snapshot: snapshot(7, "needs_manual", { actions: ["stop"] }),
      attempts: [attempt(1), attempt(2, { in_inbox: true })],
    }),
    inbox: [
      {
        route_id: 7,
        attempt: 2,
        candidate_name: "Claude",
        code: "unknown",
        catalogue_version: "t",
        now: null,
        evidence,
      },
    ],
  };
}

test("an attempt links to its inbox item, and the inbox item back to its route", async () => {
  const app = await openApp(inboxScenario());
  try {
    await row(app.page, 7).click();
    await detailOf(app.page).getByTestId("attempt-inbox-link").click();
    await app.page.waitForFunction(() => document.activeElement?.getAttribute("data-inbox-item") === "7-2", null, {
      timeout: 5000,
    });
    await app.page.getByTestId("inbox-route-link").click();
    await detailOf(app.page).getByRole("heading", { name: "Route 7" }).waitFor();
    assert.equal(await app.page.locator("nav [aria-current=page]").textContent(), "Routes");
  } finally {
    await app.close();
  }
});

test("an inbox item's route link puts focus in that route's detail, read after the list (a click focuses no link in WebKit)", async () => {
  // The list answers after the detail, as a 100 000-route list can: the route is on no page yet when it opens.
  const app = await openApp({ ...inboxScenario(), slow: { list_routes: 400 } }, { hash: "#/catalogue/inbox" });
  try {
    // Dispatched without focus, as a mouse click on a link in WebKit.
    await app.page.getByTestId("inbox-route-link").evaluate((a) => a.click());
    await detailOf(app.page).getByRole("heading", { name: "Route 7" }).waitFor();
    await app.page.waitForFunction(() => document.activeElement?.closest("[data-testid=route-detail]") !== null, null, {
      timeout: 5000,
    });
  } finally {
    await app.close();
  }
});

test("a finished retry wait whose label names its delay says that duration once", async () => {
  const timeline = [
    { kind: "attempt", number: 1, candidate_name: "Claude", start: iso(-10e3), end: iso(-8e3), outcome: "failed" },
    { kind: "gap", start: iso(-8e3), end: iso(-5e3), due: iso(-5e3), why: "retry", label: "retry 1 of 1 after 3 s" },
    { kind: "attempt", number: 2, candidate_name: "Claude", start: iso(-5e3), end: iso(-4e3), outcome: "failed" },
  ];
  const app = await openApp(
    routesOf({ snapshot: snapshot(5, "needs_manual", { actions: ["retry_now", "stop"] }), attempts: [], timeline }),
  );
  try {
    await row(app.page, 5).click();
    const t = app.page.getByTestId("route-timeline");
    await t.waitFor();
    const words = await t.getByTestId("timeline-entry").allTextContents();
    assert.equal(words[1], "Retry 1 of 1 after 3 s", "not “after 3 s · 3 s”");
  } finally {
    await app.close();
  }
});

test("the timeline draws attempts, waits and marks with a deadline marker, and stacks its words", async () => {
  const timeline = [
    { kind: "attempt", number: 1, candidate_name: "Claude", start: iso(-60e3), end: iso(-58e3), outcome: "failed" },
    {
      kind: "gap",
      start: iso(-58e3),
      end: iso(-28e3),
      due: iso(-28e3),
      why: "reset_wait",
      label: "waiting for the provider's reset",
    },
    { kind: "attempt", number: 2, candidate_name: "Claude", start: iso(-28e3), end: iso(-26e3), outcome: "failed" },
    { kind: "mark", at: iso(-26e3), label: "skipped to Codex" },
    { kind: "attempt", number: 3, candidate_name: "Codex", start: iso(-26e3), end: iso(-24e3), outcome: "failed" },
    { kind: "gap", start: iso(-24e3), end: null, due: iso(40e3), why: "retry", label: "retry 1 of 3 after 64 s" },
  ];
  for (const width of [1280, 390]) {
    const app = await openApp(
      routesOf({
        snapshot: snapshot(5, "retry_scheduled", { deadline: iso(40e3), actions: ["retry_now", "stop"] }),
        attempts: [],
        timeline,
      }),
      { width, height: 844 },
    );
    try {
      await row(app.page, 5).click();
      const t = app.page.getByTestId("route-timeline");
      await t.waitFor();
      assert.equal(await t.getByTestId("timeline-attempt").count(), 3);
      assert.equal(await t.getByTestId("timeline-gap").count(), 2);
      assert.equal(await t.getByTestId("timeline-mark").count(), 1);
      const [deadline, now] = await Promise.all(
        ["timeline-deadline", "timeline-now"].map((id) =>
          t.getByTestId(id).evaluate((e) => e.getBoundingClientRect().x),
        ),
      );
      assert.ok(now < deadline, "the now line has not reached the pending deadline yet");
      const words = await t.getByTestId("timeline-entry").allTextContents();
      assert.equal(words[3], "Skipped to Codex", "a line of its own starts upper-case");
      assert.match(words[1], /^Waiting for the provider's reset · 30 s$/);
      assert.match(words[5], /^Retry 1 of 3 after 64 s · until /);
      const lefts = await t
        .getByTestId("timeline-entry")
        .evaluateAll((els) => new Set(els.map((e) => Math.round(e.getBoundingClientRect().left))).size);
      // One entry a line at any width (the fifth outside review found two sharing one).
      assert.equal(lefts, 1, `stacked at ${width} px: every entry starts at the left edge`);
    } finally {
      await app.close();
    }
  }
});
