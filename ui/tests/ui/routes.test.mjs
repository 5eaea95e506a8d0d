import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp, holdRouteActions, horizontalOverflow, smallTargets, scrollOwners } from "./lib.mjs";
import { routeAttempt, routeSnapshot } from "./fixtures.mjs";

const iso = (msFromNow) => new Date(Date.now() + msFromNow).toISOString();

const policy = {
  transient: {
    wait_for_reset: { enabled: false, max_wait_seconds: 0 },
    retry: { enabled: true, max_retries: 3, initial_interval_seconds: 5 },
    on_exhausted: "skip",
  },
  hard: {
    wait_for_reset: { enabled: true, max_wait_seconds: 3600 },
    retry: { enabled: false, max_retries: 0, initial_interval_seconds: 0 },
    on_exhausted: "stop",
  },
  unclassified: { repeated_failure: { enabled: false, threshold: 0 } },
};

function candidate(id, name, enabled = true) {
  const agent = { kind: "simulated", program: null, args: [], model: null, script: [] };
  return { id, name, enabled, agent, policy, policy_revision: 1 };
}

function profile(id, name, candidates) {
  return { id, name, revision: 1, candidates, created_at: iso(-864e5), updated_at: iso(-864e5) };
}

const snapshot = routeSnapshot;

function attempt(number, extra = {}) {
  return routeAttempt(number, {
    classification: {
      code: "provider_overloaded",
      class: "transient",
      rule_id: "anthropic.overloaded.v1",
      catalogue_version: "2026.11",
    },
    decision: `retry ${number} at 12:00:05`,
    excerpt: `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}} request_id=req_${"x".repeat(60)}`,
    ...extra,
  });
}

const overloaded = {
  code: "provider_overloaded",
  class: "transient",
  rule_id: "anthropic.overloaded.v1",
  catalogue_version: "2026.11",
};

/** The snapshot's last failure: `classification` on candidate `index`. */
const failure = (classification, index = 0, name = "Claude") => ({
  candidate_index: index,
  candidate_name: name,
  classification,
  decision: null,
});

/** One route of every state; route 6 waits for retry 2 of 3 about 90 s ahead. */
function richScenario() {
  return {
    profiles: [
      profile(1, "Everyday", [candidate(11, "Claude"), candidate(12, "Codex"), candidate(13, "Gemini")]),
      profile(2, "Night batch", [candidate(21, "Codex")]),
    ],
    routes: [
      {
        snapshot: snapshot(7, "needs_manual", {
          generation: 5,
          candidate_index: 1,
          candidate_name: "Codex",
          last_failure: failure(
            {
              code: "network_reset",
              class: "transient",
              rule_id: "codex.stream.reset.v1",
              catalogue_version: "2026.11",
            },
            1,
            "Codex",
          ),
          manual_reason: "a tool ran before the connection reset, so replaying the prompt is not safe",
          repeat_risk:
            "the safety gate refused automatic recovery — a tool call or tool effect was seen before the failure",
          skip_to: "Gemini",
          actions: ["retry_now", "skip_now", "stop"],
          attempts: 3,
        }),
        attempts: [
          attempt(1),
          attempt(2),
          attempt(3, { candidate_index: 1, candidate_name: "Codex", decision: "manual: tool activity seen" }),
        ],
      },
      {
        snapshot: snapshot(6, "retry_scheduled", {
          generation: 4,
          last_failure: failure(overloaded),
          retry: { class: "transient", ordinal: 2, max: 3 },
          pending_outcome: "skip",
          deadline: iso(90e3),
          actions: ["retry_now", "skip_now", "cancel_wait", "stop"],
          attempts: 2,
        }),
        attempts: [attempt(1), attempt(2)],
      },
      {
        snapshot: snapshot(5, "waiting_reset", {
          profile_name: "Night batch",
          candidate_count: 1,
          skip_to: null,
          candidate_name: "Codex",
          last_failure: failure(
            {
              code: "usage_limit_reached",
              class: "hard",
              rule_id: "codex.usage_limit.v1",
              catalogue_version: "2026.11",
            },
            0,
            "Codex",
          ),
          retry: { class: "hard", ordinal: 0, max: 0 },
          pending_outcome: "stop",
          deadline: iso(38e3),
          actions: ["retry_now", "cancel_wait", "stop"],
        }),
        attempts: [attempt(1, { classification: null, decision: null, excerpt: null })],
      },
      {
        snapshot: snapshot(4, "running", { actions: ["stop"] }),
        attempts: [
          attempt(1, { finished_at: null, outcome: null, classification: null, decision: null, excerpt: null }),
        ],
      },
      {
        snapshot: snapshot(3, "succeeded"),
        attempts: [attempt(1, { outcome: "succeeded", classification: null, decision: null, excerpt: null })],
      },
      { snapshot: snapshot(2, "stopped", { manual_reason: "stopped by you", actions: ["resume"] }), attempts: [] },
    ],
  };
}

const row = (page, id) => page.locator(`[data-route="${id}"]`);
const announcer = (page) => page.locator("[data-testid=announcer]");

/** Seconds left in a countdown text (`29 s`, `1 min 5 s`, `2 min`). */
function secondsIn(text) {
  const m = /(?:(\d+) min)? ?(?:(\d+) s)?$/.exec(text);
  assert.ok(m && (m[1] || m[2]), `no duration in "${text}"`);
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0);
}

test("the route list shows every route newest first with all of its live facts", async () => {
  const app = await openApp(richScenario());
  try {
    const ids = await app.page.locator("[data-route]").evaluateAll((els) => els.map((e) => e.dataset.route));
    assert.deepEqual(ids, ["7", "6", "5", "4", "3", "2"], "newest (latest created_at) first");
    const r6 = row(app.page, 6);
    assert.equal(await r6.locator(".badge.state-retry_scheduled").textContent(), "Retry scheduled");
    assert.match(await r6.textContent(), /Everyday/);
    assert.match(await r6.locator("[data-testid=candidate]").textContent(), /Candidate 1 of 3: “Claude”/);
    assert.equal(await r6.locator(".badge.transient").textContent(), "Transient", "a class reads capitalised");
    assert.match(
      await r6.locator("[data-testid=classification]").textContent(),
      /Provider overloaded/,
      "the code in words; its raw code and rule are the attempt's, in the detail",
    );
    assert.match(await r6.locator("[data-testid=retry]").textContent(), /Transient retries: 2 of 3/);
    assert.equal(
      await r6.locator("[data-testid=pending]").textContent(),
      "If it still fails: skip to Codex",
      "names the candidate a skip goes to",
    );
    assert.equal(
      await row(app.page, 5).locator("[data-testid=retry]").textContent(),
      "Hard failures are not retried on this candidate",
    );
    assert.match(await row(app.page, 5).locator("[data-testid=pending]").textContent(), /stop for manual recovery/);
    assert.match(
      await row(app.page, 5).locator("[data-testid=countdown]").textContent(),
      /^Waiting for provider reset: 3\d s$/,
    );
    assert.match(
      await row(app.page, 7).locator("[data-testid=manual-reason]").textContent(),
      /replaying the prompt is not safe/,
      "a route that needs you says why in the list itself",
    );
    assert.equal(
      await row(app.page, 2).locator("[data-testid=manual-reason]").count(),
      0,
      "a stopped route is not flagged as needing recovery",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("after a skip the route names the candidate that failed and shows no retries of the one running", async () => {
  const scenario = richScenario();
  scenario.routes[3].snapshot = snapshot(4, "running", {
    candidate_index: 1,
    candidate_name: "Codex",
    last_failure: failure(overloaded, 0, "Claude"),
    actions: ["stop"],
  });
  const app = await openApp(scenario);
  try {
    const r4 = row(app.page, 4);
    assert.match(await r4.locator("[data-testid=candidate]").textContent(), /Candidate 2 of 3: “Codex”/);
    assert.match(
      await r4.locator("[data-testid=failed-candidate]").textContent(),
      /Last failure, on candidate 1 “Claude”:/,
    );
    assert.match(await r4.locator("[data-testid=classification]").textContent(), /Provider overloaded/);
    assert.equal(
      await r4.locator("[data-testid=retry]").count(),
      0,
      "Codex has not failed: no retry count of Claude's",
    );
    assert.equal(
      await row(app.page, 6).locator("[data-testid=failed-candidate]").textContent(),
      "Last failure, on candidate 1 “Claude”:",
      "the current candidate's own failure is labelled as the last failure too, not as current news",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("retry now says what it does: one more attempt in the same cycle after a stop, the scheduled attempt early during a wait", async () => {
  const scenario = richScenario();
  scenario.routes[0].snapshot.repeat_risk = null;
  const app = await openApp(scenario);
  try {
    await row(app.page, 7).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.locator("[data-testid=action-hint]").first().waitFor();
    assert.equal(
      await detail.locator("[data-testid=action-hint]").first().textContent(),
      "Run the current candidate again now, as one more attempt in the same cycle: the retries and reset wait it used are not renewed, so if it fails, what its policy says to do when recovery is used up (skip or stop) applies.",
      "a person's retry does not buy a new round of automatic retries",
    );
    assert.equal(
      await detail.locator("[data-testid=action-hint]").nth(1).textContent(),
      "Leave this candidate and run Gemini.",
      "skip names where it goes",
    );
    await row(app.page, 6).click();
    await detail.getByText("Run the scheduled attempt now instead of at the deadline.").waitFor();
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("the primary action fits the state: none while waiting for a reset, retry when it needs you, resume when stopped", async () => {
  const scenario = richScenario();
  scenario.routes[0].snapshot.repeat_risk = null;
  const app = await openApp(scenario);
  const detail = app.page.locator("[data-testid=route-detail]");
  const primaries = () => detail.locator("button.primary[data-action]").allTextContents();
  try {
    await row(app.page, 5).click();
    await detail.getByRole("heading", { name: "Route 5" }).waitFor();
    assert.deepEqual(
      await primaries(),
      [],
      "during a reset wait retrying now would fail again: waiting is the default",
    );
    assert.equal(
      await detail.locator("#action-hint-retry_now").textContent(),
      "Run the attempt now instead of at the provider's reset: until then it will most likely fail again.",
    );
    await row(app.page, 7).click();
    await detail.getByRole("heading", { name: "Route 7" }).waitFor();
    assert.deepEqual(await primaries(), ["Retry now"]);
    await row(app.page, 2).click();
    await detail.getByRole("heading", { name: "Route 2" }).waitFor();
    assert.deepEqual(await primaries(), ["Resume"]);
    assert.equal(
      await detail.locator("#action-hint-resume").textContent(),
      "Send the prompt to the current candidate again, in a fresh cycle: its retries and reset wait renewed, skipped candidates eligible again.",
      "resume re-runs the current candidate (the engine's fresh cycle starts there), not the first one",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("when the gate refused recovery, actions that send the prompt again say so and ask before they run", async () => {
  const app = await openApp(richScenario());
  const detail = app.page.locator("[data-testid=route-detail]");
  try {
    await row(app.page, 7).click();
    await detail.getByRole("heading", { name: "Route 7" }).waitFor();
    assert.deepEqual(
      await detail.locator("button.primary[data-action]").count(),
      0,
      "no action is pushed as the safe default when any may repeat work",
    );
    const hints = await detail.locator("[data-testid=action-hint]").allTextContents();
    const risk =
      /May repeat work: the safety gate refused automatic recovery — a tool call or tool effect was seen before the failure\.$/;
    assert.match(hints[0], risk, "retry");
    assert.match(hints[1], risk, "skip");
    assert.doesNotMatch(hints[2], /May repeat work/, "stop repeats nothing");

    const retry = detail.getByRole("button", { name: "Retry now" });
    await retry.click();
    const dialog = app.page.getByRole("dialog");
    await dialog.waitFor();
    assert.equal(await dialog.getByRole("heading").textContent(), "Retry now: this may repeat work");
    // The risk said once, then what the button does: no “may repeat work: … which may repeat”.
    assert.match(
      await dialog.locator("p").first().textContent(),
      /^The safety gate refused automatic recovery — a tool call or tool effect was seen before the failure\. Retry now sends the prompt of route 7 to an agent again, so files it changed or commands it ran may be changed or run twice\. Check the working directory first\.$/,
    );
    await app.page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    assert.ok(
      (await app.calls()).every((c) => c.cmd !== "route_action"),
      "cancelling the question sends nothing",
    );
    assert.ok(await retry.evaluate((b) => b === document.activeElement), "focus returns to the button asked about");

    await retry.click();
    await dialog.getByRole("button", { name: "Retry now anyway" }).click();
    await app.page.waitForFunction(() =>
      document.querySelector("[data-testid=route-detail] .badge")?.textContent?.includes("Running"),
    );
    const sent = (await app.calls()).filter((c) => c.cmd === "route_action");
    assert.deepEqual(
      sent.map((c) => c.args.request),
      [{ route_id: 7, action: "retry_now", expected_generation: 5, confirm_repeat: true }],
      "the request says the person agreed: the engine refuses it otherwise",
    );
    const entry = detail.locator("[data-testid=manual-action]");
    await entry.waitFor();
    assert.match(
      await entry.textContent(),
      /Retry now\s*from the app · .*started attempt 4 on Codex \(candidate 2\), after you confirmed it may repeat work/,
      "the attempt history keeps who did what, and what it led to",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("stop then resume asks first too: an agent stopped while it ran may already have done the work", async () => {
  const app = await openApp(richScenario());
  const detail = app.page.locator("[data-testid=route-detail]");
  const dialog = app.page.getByRole("dialog");
  try {
    await row(app.page, 4).click();
    await detail.getByRole("heading", { name: "Route 4" }).waitFor();
    await detail.getByRole("button", { name: "Stop" }).click();
    await dialog.getByRole("button", { name: "Stop the agent" }).click();
    await app.page.waitForFunction(() =>
      document.querySelector("[data-testid=route-detail] .badge")?.textContent?.includes("Stopped"),
    );
    assert.deepEqual(
      await detail.locator("button.primary[data-action]").count(),
      0,
      "Resume is not pushed as the safe default after a stop mid-run",
    );
    assert.match(
      await detail.locator("#action-hint-resume").textContent(),
      /May repeat work: attempt 1 was stopped while its agent ran/,
    );
    const resume = detail.getByRole("button", { name: "Resume" });
    await resume.click();
    await dialog.waitFor();
    assert.equal(await dialog.getByRole("heading").textContent(), "Resume: this may repeat work");
    await dialog.getByRole("button", { name: "Resume anyway" }).click();
    await app.page.waitForFunction(() =>
      document.querySelector("[data-testid=route-detail] .badge")?.textContent?.includes("Running"),
    );
    const sent = (await app.calls()).filter((c) => c.cmd === "route_action").map((c) => c.args.request);
    assert.deepEqual(
      sent.map((r) => [r.action, r.confirm_repeat]),
      [
        ["stop", false],
        ["resume", true],
      ],
    );
    const entries = detail.locator("[data-testid=manual-action-text]");
    await app.page.waitForFunction(
      () => document.querySelectorAll("[data-testid=route-detail] [data-testid=manual-action]").length === 2,
    );
    assert.deepEqual(await entries.allTextContents(), [
      "stopped the route and the agent of attempt 1",
      "started attempt 2 on Claude (candidate 1), after you confirmed it may repeat work (attempt 1 was stopped while its agent ran, so it may already have run tools or changed files)",
    ]);
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("after an action that no longer applies focus goes to the route's heading, never onto another action", async () => {
  const app = await openApp(richScenario());
  const detail = app.page.locator("[data-testid=route-detail]");
  try {
    await row(app.page, 6).click();
    const cancel = detail.getByRole("button", { name: "Cancel wait" });
    await cancel.focus();
    await app.page.keyboard.press("Enter");
    await app.page.waitForFunction(() =>
      document.querySelector("[data-testid=route-detail] .badge")?.textContent?.includes("Needs manual recovery"),
    );
    await app.page.waitForFunction(() => document.activeElement?.id === "detail-heading");
    // A key pressed now must not run a different action (Enter on Stop, say).
    await detail.getByRole("button", { name: "Stop" }).click();
    await app.page.waitForFunction(() =>
      document.querySelector("[data-testid=route-detail] .badge")?.textContent?.includes("Stopped"),
    );
    await app.page.waitForFunction(() => document.activeElement?.id === "detail-heading");
    assert.equal(
      await app.page.evaluate(() => document.activeElement?.getAttribute("data-action") ?? null),
      null,
      "not on Resume, which dispatches",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("a long history is listed a page at a time, and showing older moves focus to the first new route", async () => {
  const scenario = richScenario();
  // 250 routes: ids 1..250, newest (highest id) first.
  scenario.routes = Array.from({ length: 250 }, (_, i) => ({
    snapshot: snapshot(i + 1, "succeeded", { created_at: iso(-(300 - i) * 60e3) }),
    attempts: [],
  }));
  const app = await openApp(scenario);
  try {
    const ids = () => app.page.locator("[data-route]").evaluateAll((els) => els.map((e) => Number(e.dataset.route)));
    const more = app.page.getByTestId("show-more");
    assert.equal((await ids()).length, 100, "the first page only");
    assert.deepEqual((await ids()).slice(0, 2), [250, 249], "newest first");
    assert.equal((await more.textContent()).trim(), "Show older routes");
    await more.focus();
    await app.page.keyboard.press("Enter");
    await app.page.waitForFunction(() => document.querySelectorAll("[data-route]").length === 200);
    assert.equal(
      await app.page.evaluate(() => document.activeElement?.getAttribute("data-route")),
      "150",
      "keyboard focus lands on the first newly shown route, not back at the top",
    );
    const pages = (await app.calls()).filter((c) => c.cmd === "list_routes").map((c) => c.args.query.before);
    assert.deepEqual(pages, [null, 151], "the next page is asked for after the last route shown, not filtered here");
    await more.click();
    await app.page.waitForFunction(() => document.querySelectorAll("[data-route]").length === 250);
    assert.equal(await more.count(), 0, "nothing older is left");
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("filters show the routes that need you, are active, stopped or finished, with counts, and search by id, profile or prompt", async () => {
  const app = await openApp(richScenario());
  const ids = () => app.page.locator("[data-route]").evaluateAll((els) => els.map((e) => Number(e.dataset.route)));
  const shown = (list) =>
    app.page.waitForFunction(
      (want) => [...document.querySelectorAll("[data-route]")].map((e) => e.dataset.route).join() === want,
      list.join(),
    );
  const filter = (id) => app.page.getByTestId(`filter-${id}`);
  try {
    await row(app.page, 7).waitFor();
    assert.equal((await filter("needs_you").textContent()).trim(), "Needs you 1");
    assert.equal((await filter("active").textContent()).trim(), "Active 3");
    assert.equal((await filter("stopped").textContent()).trim(), "Stopped 1", "a stopped route is its own filter");
    assert.equal((await filter("finished").textContent()).trim(), "Finished 1");
    assert.equal((await filter("archived").textContent()).trim(), "Archived 0");
    assert.equal((await filter("all").textContent()).trim(), "All but archived 6");
    assert.equal(await filter("all").getAttribute("aria-pressed"), "true");

    await filter("needs_you").click();
    await shown([7]);
    assert.equal(await filter("needs_you").getAttribute("aria-pressed"), "true");
    await filter("active").click();
    await shown([6, 5, 4]);
    await filter("stopped").click();
    await shown([2]);
    await filter("finished").click();
    await shown([3]);

    await filter("all").click();
    await shown([7, 6, 5, 4, 3, 2]);
    const search = app.page.getByLabel("Search routes");
    await search.fill("night");
    await shown([5]);
    await search.fill("module 3");
    await shown([3]);
    await search.fill("4");
    await shown([4]);
    assert.deepEqual(await ids(), [4], "a route id");
    await search.fill("zzz");
    await app.page.getByTestId("routes-no-match").waitFor();
    assert.equal(
      await app.page.getByTestId("routes-no-match").textContent(),
      "No route matches this filter and search.",
    );
    const queries = (await app.calls()).filter((c) => c.cmd === "list_routes").map((c) => c.args.query);
    assert.deepEqual(
      queries.at(-1),
      { filter: "all", search: "zzz", before: null, limit: 100 },
      "the backend filters and pages; the UI only asks",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("the All filter names what it leaves out: its count is the routes it lists, archived ones counted apart after it", async () => {
  const archived = (id) => ({ snapshot: snapshot(id, "succeeded", { archived_at: iso(-60e3) }), attempts: [] });
  const app = await openApp({
    routes: [
      { snapshot: snapshot(4, "running"), attempts: [] },
      { snapshot: snapshot(3, "stopped"), attempts: [] },
      archived(2),
      archived(1),
    ],
  });
  try {
    await row(app.page, 4).waitFor();
    const filters = await app.page
      .locator("[data-testid^=filter-]")
      .evaluateAll((els) => els.map((e) => e.textContent.replace(/\s+/g, " ").trim()));
    assert.deepEqual(
      filters.slice(-2),
      ["All but archived 2", "Archived 2"],
      "“All 2” beside 4 routes reads as a wrong count: it says what it leaves out, and that follows it",
    );
    assert.equal(await app.page.locator("[data-route]").count(), 2, "its number is what it lists");
  } finally {
    await app.close();
  }
});

/** The app's one date and time format, as `format.ts` writes it, in the page's locale. */
const fullDate = (page, iso) =>
  page.evaluate(
    (iso) => new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" }).format(new Date(iso)),
    iso,
  );

test("each row says how long ago it changed, with the full date and time on hover", async () => {
  const scenario = richScenario();
  scenario.routes[0].snapshot.updated_at = iso(-3 * 60e3 - 5e3);
  scenario.routes[1].snapshot.updated_at = iso(-2 * 3600e3 - 5e3);
  const app = await openApp(scenario);
  try {
    const ago7 = row(app.page, 7).getByTestId("updated-ago");
    assert.equal(await ago7.textContent(), "3 min ago");
    assert.equal(await row(app.page, 6).getByTestId("updated-ago").textContent(), "2 h ago");
    const full = await fullDate(app.page, scenario.routes[0].snapshot.updated_at);
    const title = await ago7.getAttribute("title");
    assert.ok(title.startsWith(`Updated ${full}`), `the app's one date format in the tooltip: ${title}`);
    await row(app.page, 7).click();
    const created = app.page.locator("[data-testid=route-detail] dt", { hasText: "Created" });
    assert.equal(
      await created.evaluate((dt) => dt.nextElementSibling?.textContent),
      await fullDate(app.page, scenario.routes[0].snapshot.created_at),
      "the detail uses the same format",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("selecting a route far down the list keeps the list where it is and shows the detail beside it", async () => {
  const scenario = richScenario();
  scenario.routes = Array.from({ length: 80 }, (_, i) => ({
    snapshot: snapshot(i + 1, "succeeded"),
    attempts: [],
  }));
  const app = await openApp(scenario, { width: 1280, height: 820 });
  try {
    const chosen = row(app.page, 30);
    await chosen.scrollIntoViewIfNeeded();
    const before = await app.page.evaluate(() => document.getElementById("main").scrollTop);
    assert.ok(before > 1000, `the list is scrolled well down (${before})`);
    await chosen.click();
    const heading = app.page.locator("[data-testid=route-detail]").getByRole("heading", { name: "Route 30" });
    await heading.waitFor();
    assert.equal(
      await app.page.evaluate(() => document.getElementById("main").scrollTop),
      before,
      "the page did not jump to the top",
    );
    const head = await heading.boundingBox();
    assert.ok(head.y >= 0 && head.y + head.height <= 820, `the detail's heading is in view (${head.y})`);
    const box = await chosen.boundingBox();
    assert.ok(box.y >= 0 && box.y < 820, "the chosen row is still in view");
    await app.page.evaluate(() => document.getElementById("main").scrollTo(0, 0));
    const tops = await app.page.evaluate(() => ({
      detail: document.querySelector("[data-testid=detail-col]").getBoundingClientRect().top,
      list: document.querySelector(".list-col").getBoundingClientRect().top,
    }));
    assert.equal(
      tops.detail,
      tops.list,
      "scrolled back to the top, the detail starts level with the list: no blank band",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("engine internals sit behind an Engine details disclosure that names what it folds, last in each attempt", async () => {
  const app = await openApp(richScenario());
  try {
    await row(app.page, 7).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.locator("[data-testid=attempt]").nth(2).waitFor();
    const internals = detail.getByTestId("route-internals");
    assert.equal(await internals.getByText("engine-1").isVisible(), false, "the engine id is folded away");
    assert.equal(await detail.getByText("Policy revision", { exact: true }).first().isVisible(), false);
    await internals.locator("summary").click();
    assert.ok(await internals.getByText("engine-1").isVisible(), "one click shows it");
    assert.match(await internals.textContent(), /Generation\s*5/);
    assert.equal(
      await internals.locator("summary").textContent(),
      "Engine details (generation and engine instance)",
      "the closed disclosure says in words what it folds",
    );
    assert.equal(
      await detail.locator("[data-testid=attempt-internals] summary").first().textContent(),
      "Engine details (failure code, rule, generation, invocation and policy revision)",
      "an attempt's disclosure names the code and rule it now folds too",
    );
    const attempt = detail.locator("[data-testid=attempt]").nth(2);
    const last = await attempt.evaluate((li) => li.lastElementChild?.getAttribute("data-testid"));
    assert.equal(
      last,
      "attempt-internals",
      "the evidence shown anyway comes before the closed disclosure, not under it",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("a new countdown does not start a second high", async () => {
  const app = await openApp(richScenario());
  try {
    await row(app.page, 6).waitFor();
    // Let the shared clock's tick go stale, then send a retry due in 5 s.
    await app.page.waitForTimeout(700);
    await app.page.evaluate(() => {
      const s = window.__BACKEND__.revise(6, { deadline: new Date(Date.now() + 5000).toISOString() });
      return window.__EMIT__("route-changed", { route_id: 6, generation: s.generation, snapshot: s });
    });
    const cd = row(app.page, 6).locator("[data-testid=countdown]");
    await cd.filter({ hasText: /in \d s$/ }).waitFor();
    assert.equal(await cd.textContent(), "Retry 2 of 3 in 5 s", "5 s away reads 5 s, not 6 s");
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("with the gate's refusal the status does not promise retries, and after success no failure is shown", async () => {
  const scenario = richScenario();
  scenario.routes[0].snapshot.retry = { class: "transient", ordinal: 0, max: 3 };
  scenario.routes[4].snapshot.last_failure = failure(overloaded);
  const app = await openApp(scenario);
  try {
    await row(app.page, 7).waitFor();
    assert.equal(
      await row(app.page, 7).locator("[data-testid=retry]").count(),
      0,
      "the gate stopped it: no retry of the policy's will run",
    );
    assert.equal(await row(app.page, 7).locator("[data-testid=pending]").count(), 0, "no exhausted outcome either");
    assert.equal(
      await row(app.page, 3).locator("[data-testid=classification]").count(),
      0,
      "a succeeded route shows no failure badge",
    );
    assert.equal(
      await row(app.page, 5).locator("[data-testid=pending]").textContent(),
      "If it still fails: stop for manual recovery",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("on the last candidate a skip outcome says the route will wait for you, not skip", async () => {
  const scenario = richScenario();
  Object.assign(scenario.routes[1].snapshot, { candidate_index: 2, candidate_name: "Gemini", skip_to: null });
  const app = await openApp(scenario);
  try {
    assert.equal(
      await row(app.page, 6).locator("[data-testid=pending]").textContent(),
      "If it still fails: no candidate is left to skip to, so the route will wait for you",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("the working directory can be typed or chosen with the folder picker", async () => {
  const scenario = richScenario();
  scenario.openPath = "/home/me/project";
  const app = await openApp(scenario);
  try {
    await app.page.getByTestId("choose-cwd").click();
    const cwd = app.page.getByLabel("Working directory");
    await app.page.waitForFunction(() => document.getElementById("run-cwd")?.value === "/home/me/project");
    const asked = (await app.calls()).find((c) => c.cmd === "choose_path");
    assert.equal(asked.args.request.kind, "folder", "a folder, not a file");
    await cwd.fill("/srv/other");
    assert.equal(await cwd.inputValue(), "/srv/other", "the field stays editable");

    await app.page.evaluate(() => {
      window.__BACKEND__.scenario.failNext = {
        choose_path: "Could not open the file chooser: no display to show it on",
      };
    });
    await app.page.getByTestId("choose-cwd").click();
    await app.page
      .getByText("Could not open the file chooser: no display to show it on. Type the path instead.")
      .waitFor();
    assert.equal(await cwd.inputValue(), "/srv/other", "what was typed is kept");
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("on a phone the list comes first and the run form is one tap away", async () => {
  const app = await openApp(richScenario(), { width: 390, height: 844 });
  try {
    await row(app.page, 7).waitFor();
    assert.equal(await app.page.locator("#run-prompt").isVisible(), false, "the form is folded");
    const first = await row(app.page, 7).boundingBox();
    assert.ok(first.y < 844, `the first route is on the first screen (${first.y})`);
    const unfold = app.page.getByTestId("unfold-start");
    assert.equal(await unfold.getAttribute("aria-expanded"), "false");
    await unfold.click();
    await app.page.locator("#run-prompt").waitFor();
    assert.equal(await app.page.evaluate(() => document.activeElement?.id), "run-profile", "focus moves into the form");
    assert.deepEqual(await smallTargets(app.page), []);
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("a waiting route counts down to its absolute deadline and reads due now at zero without dispatching", async () => {
  const scenario = richScenario();
  scenario.routes[2].snapshot.deadline = iso(1500);
  const app = await openApp(scenario);
  try {
    const cd = row(app.page, 6).locator("[data-testid=countdown]");
    const first = await cd.textContent();
    assert.match(
      first,
      /^Retry 2 of 3 in 1 min( (2\d|30) s)?$/,
      "about 90 s left, computed from the deadline, not from a relative delay",
    );
    await app.page.waitForTimeout(2200);
    assert.ok(secondsIn(await cd.textContent()) < secondsIn(first), "the countdown decreases with the shared clock");
    await app.page.waitForFunction(() =>
      document.querySelector('[data-route="5"] [data-testid=countdown]')?.textContent?.includes("due now"),
    );
    assert.equal(
      await row(app.page, 5).locator("[data-testid=countdown]").textContent(),
      "Waiting for provider reset: due now",
    );
    const sent = (await app.calls()).map((c) => c.cmd).filter((c) => !c.startsWith("plugin:event"));
    assert.ok(
      sent.every((c) =>
        [
          "list_routes",
          "list_profiles",
          "dispatch_paused",
          "get_settings",
          "engine_status",
          "inspect_workdir",
          "plugin:window|set_theme",
        ].includes(c),
      ),
      `the browser dispatches nothing at zero: ${sent}`,
    );
  } finally {
    await app.close();
  }
});

test("a newer route-changed event updates the row and announces the state change; an older one is ignored", async () => {
  const app = await openApp(richScenario());
  try {
    await row(app.page, 4).waitFor();
    const fresh = await app.page.evaluate(() =>
      window.__BACKEND__.revise(4, {
        state: "needs_manual",
        manual_reason: "the failure matched no catalogue rule",
        actions: ["retry_now", "stop"],
      }),
    );
    await app.emit("route-changed", { route_id: 4, generation: fresh.generation, snapshot: fresh });
    await row(app.page, 4).locator(".badge.state-needs_manual").waitFor();
    await app.page.waitForFunction(() => document.querySelector("[data-testid=announcer]")?.textContent !== "");
    assert.equal(
      await announcer(app.page).textContent(),
      "Route 4: needs manual recovery — the failure matched no catalogue rule",
    );

    const late = { ...fresh, generation: fresh.generation - 1, state: "succeeded", manual_reason: null, actions: [] };
    await app.emit("route-changed", { route_id: 4, generation: late.generation, snapshot: late });
    const sameState = await app.page.evaluate(() =>
      window.__BACKEND__.revise(6, { deadline: new Date(Date.now() + 300e3).toISOString() }),
    );
    await app.emit("route-changed", { route_id: 6, generation: sameState.generation, snapshot: sameState });
    await row(app.page, 6)
      .locator("[data-testid=countdown]", { hasText: /in [45] min( \d+ s)?$/ })
      .waitFor();
    assert.equal(
      await row(app.page, 4).locator(".badge").first().textContent(),
      "Needs manual recovery",
      "the late event (lower generation) is dropped",
    );
    assert.equal(
      await announcer(app.page).textContent(),
      "Route 4: needs manual recovery — the failure matched no catalogue rule",
      "a new deadline without a state change is not announced",
    );
  } finally {
    await app.close();
  }
});

test("a route card names the failure in words with its class; code, rule and catalogue are in the attempt's Engine details", async () => {
  const scenario = richScenario();
  const unmatched = { code: "unknown", class: "unclassified", rule_id: null, catalogue_version: "2026.11" };
  scenario.routes.find((r) => r.snapshot.id === 5).attempts = [attempt(1, { classification: unmatched })];
  const app = await openApp(scenario);
  try {
    const card = row(app.page, 6);
    const line = card.getByTestId("classification");
    await line.waitFor();
    assert.equal((await line.getByTestId("code-words").textContent()).trim(), "Provider overloaded");
    assert.equal((await line.locator(".badge").textContent()).trim(), "Transient");
    const said = await card.textContent();
    for (const raw of ["provider_overloaded", "anthropic.overloaded.v1", "rule", "catalogue 2026"])
      assert.ok(!said.includes(raw), `the card's headline reads in words, without “${raw}”: ${said}`);
    await card.click();
    const detail = app.page.locator("[data-testid=route-detail]");
    const first = detail.locator("[data-testid=attempt]").first();
    await first.waitFor();
    assert.equal((await first.getByTestId("code-words").textContent()).trim(), "Provider overloaded");
    assert.equal((await first.locator("dd .badge").textContent()).trim(), "Transient");
    const shown = await first.evaluate((li) => li.innerText);
    for (const raw of ["provider_overloaded", "anthropic.overloaded.v1", "2026.11"])
      assert.ok(!shown.includes(raw), `the attempt reads in words; “${raw}” waits in Engine details: ${shown}`);
    const internals = first.getByTestId("attempt-internals");
    await internals.locator("summary").click();
    assert.equal((await internals.getByTestId("attempt-code").textContent()).trim(), "provider_overloaded");
    assert.equal((await internals.getByTestId("attempt-rule").textContent()).trim(), "anthropic.overloaded.v1");
    assert.equal((await internals.getByTestId("attempt-catalogue").textContent()).trim(), "2026.11");
    await row(app.page, 5).click();
    const words = detail.locator("[data-testid=attempt]").first();
    await words.getByTestId("code-words").filter({ hasText: "Not recognised" }).waitFor();
    assert.equal(
      (await words.getByTestId("attempt-rule").textContent()).trim(),
      "No catalogue rule matched",
      "no rule reads as words, not “rule none matched”",
    );
  } finally {
    await app.close();
  }
});

test("an event for the open route reloads its attempt history", async () => {
  const app = await openApp(richScenario());
  try {
    await row(app.page, 6).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.locator("[data-testid=attempt]").nth(1).waitFor();
    assert.equal(await detail.locator("[data-testid=attempt]").count(), 2);
    const first = detail.locator("[data-testid=attempt]").first();
    assert.match(
      await first.textContent(),
      /Code\s*provider_overloaded\s*Rule\s*anthropic\.overloaded\.v1\s*Catalogue\s*2026\.11/,
    );
    assert.match(await first.textContent(), /Retry 1 at 12:00:05/);
    assert.match(await first.textContent(), /Policy revision\s*2/);
    assert.match(await first.locator(".excerpt").textContent(), /overloaded_error/);
    const fresh = await app.page.evaluate(() => {
      const b = window.__BACKEND__;
      const old = b.routes.find((r) => r.snapshot.id === 6).attempts;
      const third = {
        ...old[1],
        number: 3,
        generation: 3,
        finished_at: null,
        outcome: null,
        classification: null,
        decision: null,
        excerpt: null,
      };
      return b.revise(6, { state: "running", deadline: null, actions: ["stop"], attempts: 3 }, [...old, third]);
    });
    await app.emit("route-changed", { route_id: 6, generation: fresh.generation, snapshot: fresh });
    await detail.locator("[data-testid=attempt]").nth(2).waitFor();
    assert.match(await detail.locator("[data-testid=attempt]").nth(2).textContent(), /Attempt 3[\s\S]*Running/);
  } finally {
    await app.close();
  }
});

test("the open route offers only its valid actions, and an action sends the generation seen", async () => {
  const app = await openApp(richScenario());
  try {
    await row(app.page, 6).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.locator("[data-testid=attempt]").first().waitFor();
    const labels = await detail.locator(".buttons button:enabled").allTextContents();
    assert.deepEqual(
      labels.map((l) => l.trim()),
      ["Retry now", "Skip now", "Cancel wait", "Stop"],
    );
    assert.ok(
      await detail.getByRole("button", { name: "Stop" }).evaluate((b) => b.classList.contains("danger")),
      "Stop is marked dangerous",
    );
    await detail.getByRole("button", { name: "Cancel wait" }).click();
    await detail.locator(".badge.state-needs_manual").waitFor();
    const sent = (await app.calls()).filter((c) => c.cmd === "route_action");
    assert.deepEqual(
      sent.map((c) => c.args.request),
      [{ route_id: 6, action: "cancel_wait", expected_generation: 4, confirm_repeat: false }],
    );
    assert.deepEqual(
      (await detail.locator(".buttons button:enabled").allTextContents()).map((l) => l.trim()),
      ["Retry now", "Stop"],
      "the buttons follow the new snapshot's actions",
    );
    assert.match(await detail.locator("[data-testid=detail-manual-reason]").textContent(), /the wait was cancelled/);
  } finally {
    await app.close();
  }
});

test("action buttons are disabled while a request is in flight", async () => {
  const app = await openApp(richScenario());
  try {
    await holdRouteActions(app.page);
    await row(app.page, 4).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.getByRole("button", { name: "Stop" }).click();
    await app.page.getByRole("dialog").getByRole("button", { name: "Stop the agent" }).click();
    await detail.getByRole("button", { name: "Stop…" }).waitFor();
    assert.equal(
      await detail.getByRole("button", { name: "Stop…" }).isDisabled(),
      true,
      "no second click while the first is pending",
    );
    await app.page.evaluate(() => window.__RELEASE__());
    await detail.getByRole("button", { name: "Resume" }).waitFor();
    assert.equal(await detail.getByRole("button", { name: "Resume" }).isEnabled(), true);
    assert.equal((await app.calls()).filter((c) => c.cmd === "route_action").length, 1);
  } finally {
    await app.close();
  }
});

test("a stale action shows a notice with the route's current state instead of failing silently", async () => {
  const app = await openApp(richScenario());
  try {
    await row(app.page, 6).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.locator("[data-testid=attempt]").first().waitFor();
    // The engine moves on (the retry fires) without the UI hearing about it.
    await app.page.evaluate(() =>
      window.__BACKEND__.revise(6, { state: "running", deadline: null, actions: ["stop"] }),
    );
    await detail.getByRole("button", { name: "Skip now" }).click();
    const notice = detail.locator("[data-testid=action-notice]");
    await notice.waitFor();
    assert.match(
      await notice.textContent(),
      /^This route changed before your action \(the route changed: it is running now, at generation 5;.*\)\. Here is its current state; choose again\.$/,
    );
    assert.equal(await detail.locator(".badge.state-running").count(), 1, "the fresh snapshot is shown");
    assert.deepEqual(
      (await detail.locator(".buttons button:enabled").allTextContents()).map((l) => l.trim()),
      ["Stop"],
    );
    assert.equal(await row(app.page, 6).locator(".badge.state-running").count(), 1, "the list row is refreshed too");
  } finally {
    await app.close();
  }
});

test("a refused action's message gives its times as every other time is shown", async () => {
  const scenario = richScenario();
  const until = "2026-12-02T12:02:00Z";
  scenario.failNext = {
    route_action: { code: "conflict", message: `Claude would not start now: work limited until ${until}`, fields: [] },
  };
  const app = await openApp(scenario);
  try {
    await row(app.page, 2).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.getByRole("button", { name: "Resume" }).click();
    const said = await detail.locator("[data-testid=action-notice]").textContent();
    const shown = await app.page.evaluate(
      (iso) =>
        new Date(iso).toLocaleString(undefined, {
          dateStyle: "medium",
          timeStyle: "medium",
        }),
      until,
    );
    assert.ok(!said.includes(until), `no raw RFC 3339 instant: ${said}`);
    assert.equal(said, `Resume failed: Claude would not start now: work limited until ${shown}`, "in the app's words");
  } finally {
    await app.close();
  }
});

test("a refused action other than stale is reported with the backend's message", async () => {
  const scenario = richScenario();
  scenario.failNext = { route_action: { code: "store", message: "database is locked", fields: [] } };
  const app = await openApp(scenario);
  try {
    await row(app.page, 2).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.getByRole("button", { name: "Resume" }).click();
    assert.equal(
      await detail.locator("[data-testid=action-notice]").textContent(),
      "Resume failed: database is locked",
    );
    assert.equal(
      await detail.getByRole("button", { name: "Resume" }).isEnabled(),
      true,
      "buttons come back after the request ends",
    );
  } finally {
    await app.close();
  }
});

test("Start run pressed before the profiles are read waits for them and runs on the only one", async () => {
  // The profiles come from the engine, which opens behind the first list: slow at start.
  const only = richScenario().profiles[0];
  const app = await openApp({ ...richScenario(), profiles: [only], slow: { list_profiles: 1500 } });
  try {
    const form = app.page.locator("[data-testid=start-run]");
    await form.getByLabel("Prompt").fill("Add a changelog entry");
    await form.getByRole("button", { name: "Start run" }).click();
    await app.page.waitForFunction(() => window.__CALLS__.some((c) => c.cmd === "start_run"), null, { timeout: 10000 });
    const sent = (await app.calls()).filter((c) => c.cmd === "start_run").map((c) => c.args.request.profile_id);
    assert.deepEqual(sent, [only.id], "no 'Choose the profile' for a form that had no profiles yet");
    assert.doesNotMatch(await form.textContent(), /Choose the profile/);
  } finally {
    await app.close();
  }
});

test("starting a run checks the form, then sends it and opens the new route", async () => {
  const app = await openApp(richScenario());
  try {
    const form = app.page.locator("[data-testid=start-run]");
    await form.getByRole("button", { name: "Start run" }).click();
    assert.match(await form.textContent(), /Choose the profile/);
    assert.match(await form.textContent(), /Write the prompt/);
    assert.equal(
      (await app.calls()).filter((c) => c.cmd === "start_run").length,
      0,
      "nothing is sent while the form is incomplete",
    );

    await form.getByLabel("Profile").selectOption({ label: "Everyday · 3 enabled" });
    await form.getByLabel("Prompt").fill("Add a changelog entry");
    await form.getByLabel("Working directory (optional)").fill("/home/me/repo");
    await form.getByRole("button", { name: "Start run" }).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.getByRole("heading", { name: "Route 100" }).waitFor();
    const sent = (await app.calls()).filter((c) => c.cmd === "start_run").map((c) => c.args.request);
    assert.deepEqual(sent, [{ profile_id: 1, prompt: "Add a changelog entry", cwd: "/home/me/repo" }]);
    assert.equal(
      await row(app.page, 100).getAttribute("aria-current"),
      "true",
      "the new route is selected in the list",
    );
    assert.equal(await form.getByLabel("Prompt").inputValue(), "", "the prompt is cleared for the next run");
  } finally {
    await app.close();
  }
});

test("a refused start shows the backend's reason at the profile field", async () => {
  const scenario = richScenario();
  scenario.profiles[1].candidates = [];
  const app = await openApp(scenario);
  try {
    const form = app.page.locator("[data-testid=start-run]");
    await form.getByLabel("Profile").selectOption({ label: "Night batch · 0 enabled" });
    await form.getByLabel("Prompt").fill("Anything");
    await form.getByRole("button", { name: "Start run" }).click();
    await form.locator(".field-error", { hasText: "profile has no enabled candidate" }).waitFor();
  } finally {
    await app.close();
  }
});

test("a request Tauri refuses as malformed still tells the person why", async () => {
  const scenario = richScenario();
  // What Tauri rejects with when arguments do not deserialize: a bare string.
  scenario.failNext = {
    start_run: "invalid args `request` for command `start_run`: invalid value: integer `-1`, expected u32",
  };
  const app = await openApp(scenario);
  try {
    const form = app.page.locator("[data-testid=start-run]");
    await form.getByLabel("Profile").selectOption({ label: "Everyday · 3 enabled" });
    await form.getByLabel("Prompt").fill("Anything");
    await form.getByRole("button", { name: "Start run" }).click();
    await form
      .getByRole("alert")
      .filter({ hasText: "Could not start the run: invalid args `request` for command `start_run`" })
      .waitFor();
  } finally {
    await app.close();
  }
});

test("with no routes the list explains what a route is and points to the start form", async () => {
  const app = await openApp({ profiles: richScenario().profiles });
  try {
    const empty = app.page.locator("[data-testid=routes-empty]");
    await empty.waitFor();
    assert.match(await empty.textContent(), /No routes yet[\s\S]*Start a run/);
  } finally {
    await app.close();
  }
});

test("with no profile the start form leads to the Profiles area", async () => {
  const app = await openApp({}, { width: 390, height: 844 });
  try {
    const go = app.page.getByRole("link", { name: "Create a profile" });
    await go.waitFor();
    assert.deepEqual(await smallTargets(app.page), []);
    await go.click();
    assert.equal(await app.page.locator("nav [aria-current=page]").textContent(), "Profiles");
  } finally {
    await app.close();
  }
});

test("load failures are shown with their messages", async () => {
  const app = await openApp({
    failNext: {
      list_routes: { code: "store", message: "database is locked", fields: [] },
      list_profiles: { code: "io", message: "permission denied", fields: [] },
    },
  });
  try {
    await app.page.getByText("Could not load routes: database is locked").waitFor();
    await app.page.getByText("Could not load profiles: permission denied").waitFor();
  } finally {
    await app.close();
  }
});

test("desktop shows list and detail side by side", async () => {
  const app = await openApp(richScenario(), { width: 1280, height: 820 });
  try {
    await row(app.page, 2).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.getByText("No attempt has been dispatched yet.").waitFor();
    const head = await detail.getByRole("heading", { name: "Route 2" }).boundingBox();
    assert.ok(head.y >= 44 && head.y < 820, "selecting a route far down the list brings the detail's top into view");
    const list = await row(app.page, 2).boundingBox();
    const box = await detail.boundingBox();
    assert.ok(box.x > list.x + list.width, "detail sits to the right of the list");
    assert.equal(
      await detail.getByRole("button", { name: "← All routes" }).isVisible(),
      false,
      "no back button when both are visible",
    );
    assert.deepEqual(await scrollOwners(app.page), ["main#main"]);
  } finally {
    await app.close();
  }
});

/** Elements sticking out, except the frame's sideways-scrolling tab strip (not this area's). */
async function overflowOfArea(page) {
  const o = await horizontalOverflow(page);
  return { ...o, over: o.over.filter((el) => el !== "a.tab") };
}

test("at phone size the list and the detail stack, fit the width, and have 44 px targets", async () => {
  const app = await openApp(richScenario(), { width: 390, height: 844 });
  try {
    await row(app.page, 6).waitFor();
    let o = await overflowOfArea(app.page);
    assert.ok(o.scrollWidth <= o.width && o.over.length === 0, `list overflows: ${JSON.stringify(o)}`);
    assert.deepEqual(await smallTargets(app.page), []);
    assert.deepEqual(await scrollOwners(app.page), ["main#main"], "only <main> scrolls");

    await row(app.page, 7).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.locator("[data-testid=attempt]").nth(2).waitFor();
    assert.equal(await row(app.page, 7).isVisible(), false, "the detail replaces the list on a phone");
    assert.ok(
      await detail.getByRole("heading", { name: "Route 7" }).evaluate((h) => h === document.activeElement),
      "focus moves to the detail",
    );
    o = await overflowOfArea(app.page);
    assert.ok(o.scrollWidth <= o.width && o.over.length === 0, `detail overflows: ${JSON.stringify(o)}`);
    assert.deepEqual(await smallTargets(app.page), []);
    assert.deepEqual(await scrollOwners(app.page), ["main#main"]);

    await detail.getByRole("button", { name: "← All routes" }).click();
    await row(app.page, 7).waitFor();
    assert.ok(
      await row(app.page, 7).evaluate((b) => b === document.activeElement),
      "back returns focus to the route it left",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("while the engine starts the saved list shows with a starting notice, and reloads when it is ready", async () => {
  const app = await openApp({ ...richScenario(), engineStatus: { state: "starting" } });
  try {
    const starting = app.page.locator("[data-testid=engine-starting]");
    await starting.waitFor();
    assert.match(await starting.innerText(), /Starting: checking the database and taking over routes…/);
    assert.match(await row(app.page, 6).innerText(), /Retry scheduled/);
    // Taking over the routes changed one; the list read while starting is out of date.
    await app.page.evaluate(() => {
      window.__BACKEND__.revise(6, { state: "stopped", actions: ["resume"] });
    });
    await app.emit("engine-status", { state: "ready" });
    await starting.waitFor({ state: "detached" });
    await row(app.page, 6).filter({ hasText: "Stopped" }).waitFor();
  } finally {
    await app.close();
  }
});

test("a database the engine cannot open replaces the list with why", async () => {
  const app = await openApp({ ...richScenario(), engineStatus: { state: "starting" } });
  const why = "/home/me/.local/share/recourse/recourse.db is damaged (database disk image is malformed)";
  try {
    await row(app.page, 7).waitFor();
    await app.emit("engine-status", { state: "failed", message: why });
    const failed = app.page.locator("[data-testid=engine-failed]");
    await failed.waitFor();
    assert.match(await failed.innerText(), /Recourse could not open its database\./);
    assert.ok((await failed.innerText()).includes(why), "the open error's own message");
    assert.equal(await row(app.page, 7).count(), 0, "no route list beside the error");
  } finally {
    await app.close();
  }
});

test("a database that failed to open before the window loaded shows why at once", async () => {
  const why = "/data/recourse.db has schema version 99, newer than this build understands (12)";
  const app = await openApp({ ...richScenario(), engineStatus: { state: "failed", message: why } });
  try {
    const failed = app.page.locator("[data-testid=engine-failed]");
    await failed.waitFor();
    assert.ok((await failed.innerText()).includes(why));
  } finally {
    await app.close();
  }
});

/** A transcript as the backend keeps one: a refused write, then the answer. */
function refusedWrite(routeId, attemptNo) {
  return {
    route_id: routeId,
    attempt: attemptNo,
    transcript: {
      session_id: "00000000-0000-4000-8000-000000000001",
      model: "claude-opus-5-5",
      entries: [
        {
          kind: "tool",
          id: "toolu_1",
          name: "Write",
          summary: "src/app.py",
          status: "refused",
          detail: "Cannot write to src/app.py while in plan mode.",
        },
        { kind: "assistant", text: "I could not write the file." },
      ],
      answer: "I could not write the file.",
      usage: { input_tokens: 24, output_tokens: 10, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.0003 },
      elided: { entries: 0, bytes: 0 },
    },
    files: { dir: "/work/repo", files: [], more: 0, diff_stat: "" },
  };
}

test("an attempt shows what its agent did, and its whole transcript opens on demand", async () => {
  const scenario = richScenario();
  const summary = {
    session_id: "00000000-0000-4000-8000-000000000001",
    answer_excerpt: "I could not write the file.",
    tool_calls: 1,
    refused: ["Write"],
    input_tokens: 24,
    output_tokens: 10,
    cost_usd: 0.0003,
    files_changed: 0,
  };
  scenario.routes.push({
    snapshot: snapshot(9, "succeeded", { generation: 2, cwd: "/work/repo" }),
    attempts: [
      attempt(1, { outcome: "succeeded", classification: null, decision: null, excerpt: null, transcript: summary }),
    ],
    totals: { input_tokens: 24, output_tokens: 10, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.0003 },
    refused_notice: "succeeded, but the agent was refused 1 tool use (Write): its access is read-only",
  });
  scenario.transcripts = { "9/1": refusedWrite(9, 1) };
  const app = await openApp(scenario);
  try {
    await row(app.page, 9).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.getByTestId("refused-notice").waitFor();
    assert.equal(
      await detail.getByTestId("refused-notice").textContent(),
      "Note: succeeded, but the agent was refused 1 tool use (Write): its access is read-only",
    );
    assert.equal(
      await detail.getByTestId("attempt-figures").textContent(),
      "1 tool call · 1 refused (Write) · 0 files changed · 24 in / 10 out tokens · $0.0003",
    );
    assert.equal(await detail.getByTestId("attempt-answer").textContent(), "I could not write the file.");
    assert.match(await detail.getByTestId("route-totals").textContent(), /24 in \/ 10 out tokens, \$0\.0003/);
    assert.match(await detail.textContent(), /Working directory\s*\/work\/repo/);
    assert.equal(await detail.getByTestId("transcript").count(), 0, "read only when opened");
    await detail.getByText("Transcript", { exact: true }).click();
    const tool = detail.getByTestId("transcript-tool");
    await tool.waitFor();
    assert.match(await tool.textContent(), /Write\s*src\/app\.py\s*Refused/);
    assert.match(await tool.textContent(), /while in plan mode/);
    assert.match(await detail.getByTestId("files-changed").textContent(), /No file of \/work\/repo changed/);
    const calls = (await app.calls()).filter((c) => c.cmd === "attempt_transcript");
    assert.deepEqual(calls[0].args, { routeId: 9, attempt: 1 });
  } finally {
    await app.close();
  }
});

/** Asks to retry route 7 now; the question's account of what its attempt ran. */
async function whatRanBeforeRetry(app) {
  await row(app.page, 7).click();
  await app.page.getByRole("button", { name: "Retry now" }).click();
  return app.page.getByRole("dialog").getByTestId("what-ran");
}

test("the question before a repeat shows what the attempt ran and changed", async () => {
  const scenario = richScenario();
  scenario.transcripts = {
    "7/3": {
      route_id: 7,
      attempt: 3,
      transcript: {
        session_id: "t1",
        model: null,
        entries: [{ kind: "tool", id: "i1", name: "shell", summary: "npm test", status: "completed", detail: null }],
        answer: null,
        usage: null,
        elided: { entries: 0, bytes: 0 },
      },
      files: { dir: "/work/repo", files: [{ path: "src/app.py", status: "M" }], more: 0, diff_stat: "" },
    },
  };
  const app = await openApp(scenario);
  try {
    const what = await whatRanBeforeRetry(app);
    await what.getByTestId("transcript-tool").waitFor();
    assert.match(await what.textContent(), /What attempt 3 did[\s\S]*shell\s*npm test\s*Completed/);
    assert.match(await what.textContent(), /This attempt changed 1 file[\s\S]*src\/app\.py/);
  } finally {
    await app.close();
  }
});

/**
 * A long transcript as the bound keeps one: `entries` entries alternating a
 * tool call and what the agent wrote (so half are tool calls), the answer
 * and one changed file.
 */
function longTranscript(routeId, attemptNo, entries) {
  return {
    route_id: routeId,
    attempt: attemptNo,
    transcript: {
      session_id: "t-long",
      model: null,
      entries: Array.from({ length: entries }, (_, i) =>
        i % 2 === 0
          ? { kind: "tool", id: `call-${i}`, name: "Bash", summary: `step ${i}`, status: "completed", detail: null }
          : { kind: "assistant", text: `note ${i}` },
      ),
      answer: "All steps done.",
      usage: null,
      elided: { entries: 0, bytes: 0 },
    },
    files: { dir: "/work/repo", files: [{ path: "src/app.py", status: "M" }], more: 0, diff_stat: "" },
  };
}

/** A finished route 9 whose first attempt holds `transcript`, or a running one. */
function routeWithTranscript(scenario, transcript, { running = false } = {}) {
  const summary = {
    session_id: "t-long",
    answer_excerpt: null,
    tool_calls: 0,
    refused: [],
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: null,
    files_changed: 1,
  };
  scenario.routes.push({
    snapshot: snapshot(9, running ? "running" : "succeeded", { generation: 2, cwd: "/work/repo" }),
    attempts: [
      attempt(1, {
        outcome: running ? null : "succeeded",
        finished_at: running ? null : iso(-110e3),
        classification: null,
        decision: null,
        excerpt: null,
        transcript: summary,
      }),
    ],
  });
  scenario.transcripts = { "9/1": transcript };
}

const shownIndexes = (scope) =>
  scope.locator("[data-testid=transcript] .entry").evaluateAll((els) => els.map((e) => Number(e.dataset.index)));

/** Opens route 9's first attempt behind `disclosure`; its detail and the transcript's pager. */
async function openPagedTranscript(app, disclosure) {
  await row(app.page, 9).click();
  const detail = app.page.locator("[data-testid=route-detail]");
  await detail.getByText(disclosure, { exact: true }).click();
  const pager = detail.getByTestId("transcript-pager");
  await pager.waitFor();
  return { detail, pager };
}

/** Waits until the open transcript shows `n` entries. */
const entriesShown = (app, n) =>
  app.page.waitForFunction((n) => document.querySelectorAll("[data-testid=transcript] .entry").length === n, n);

test("a long transcript paints its first page with the answer and files, and shows the rest on demand", async () => {
  const scenario = richScenario();
  routeWithTranscript(scenario, longTranscript(9, 1, 1500));
  const app = await openApp(scenario);
  try {
    const { detail, pager } = await openPagedTranscript(app, "Transcript");
    const shown = await shownIndexes(detail);
    assert.deepEqual(shown, [...Array(200).keys()], "the first page, in order");
    assert.equal(await pager.getByTestId("transcript-count").textContent(), "Showing 200 of 1,500 entries");
    assert.match(await detail.getByTestId("transcript-answer").textContent(), /All steps done\./, "answer not paged");
    assert.match(await detail.getByTestId("files-changed").textContent(), /src\/app\.py/, "files not paged");

    const more = pager.getByRole("button", { name: "Show 200 more" });
    await more.focus();
    await app.page.keyboard.press("Enter");
    await entriesShown(app, 400);
    assert.equal(
      await app.page.evaluate(() => document.activeElement?.getAttribute("data-index")),
      "200",
      "focus moves to the first entry revealed, so a keyboard reader goes on from there",
    );
    assert.equal(await pager.getByTestId("transcript-count").textContent(), "Showing 400 of 1,500 entries");

    await pager.getByRole("button", { name: "Show all 1,500" }).click();
    await entriesShown(app, 1500);
    assert.deepEqual(await shownIndexes(detail), [...Array(1500).keys()], "every entry once, in order");
    assert.equal(await detail.getByTestId("transcript-pager").count(), 0, "nothing left to show");
  } finally {
    await app.close();
  }
});

test("a running attempt's long output shows its newest page, and earlier entries on demand", async () => {
  const scenario = richScenario();
  routeWithTranscript(scenario, longTranscript(9, 1, 450), { running: true });
  const app = await openApp(scenario);
  try {
    const { detail, pager } = await openPagedTranscript(app, "Output so far");
    assert.deepEqual(
      await shownIndexes(detail),
      [...Array(200).keys()].map((i) => 250 + i),
      "the newest 200",
    );
    assert.equal(await pager.getByTestId("transcript-count").textContent(), "Showing the last 200 of 450 entries");
    await pager.getByRole("button", { name: "Show 200 earlier" }).click();
    await entriesShown(app, 400);
    assert.equal(await app.page.evaluate(() => document.activeElement?.getAttribute("data-index")), "50");
  } finally {
    await app.close();
  }
});

test("the question before a repeat states how many tool calls it shows, and shows every one on demand", async () => {
  const scenario = richScenario();
  // 900 entries hold 450 tool calls: the first page of 200 shows fewer than half.
  scenario.transcripts = { "7/3": longTranscript(7, 3, 900) };
  const app = await openApp(scenario);
  try {
    const what = await whatRanBeforeRetry(app);
    await what.getByTestId("transcript-pager").waitFor();
    assert.equal(await what.getByTestId("transcript-tool-count").textContent(), "Showing 200 of 450 tool calls");
    assert.equal(await what.getByTestId("transcript-tool").count(), 200);
    assert.equal(await what.getByTestId("transcript-assistant").count(), 0, "only what ran");
    await what.getByRole("button", { name: "Show all 450" }).click();
    await app.page.waitForFunction(
      () => document.querySelectorAll("[data-testid=what-ran] [data-testid=transcript-tool]").length === 450,
    );
    assert.equal(await what.getByTestId("transcript-tool-count").textContent(), "450 tool calls");
    assert.equal(await what.getByTestId("transcript-pager").count(), 0);
  } finally {
    await app.close();
  }
});

test("a queued route says why, and a held dispatch is listed under Not dispatched in the backend's words", async () => {
  const held = {
    generation: 4,
    candidate_index: 0,
    candidate_name: "Claude",
    at: iso(-30e3),
    account: "claude-code#3f9a1c2b7d0e",
    account_name: "Claude Code (~/.claude-work)",
    classification: {
      code: "usage_limit_reached",
      class: "hard",
      rule_id: "claude_code.usage_limit_epoch.v1",
      catalogue_version: "2026.12.5",
    },
    until: iso(-1e3),
    text: "not dispatched: Claude Code (~/.claude-work) limited until 2026-12-05T13:02:00Z; wait for the hard reset until 2026-12-05T13:02:00Z",
  };
  const queued = snapshot(8, "queued", {
    generation: 5,
    queued:
      "queued: the limit of Claude Code (~/.claude-work) has reset and route 3 is trying it; this one starts once that answers",
    account: "claude-code#3f9a1c2b7d0e",
    actions: ["skip_now", "cancel_wait", "stop"],
  });
  const app = await openApp({ routes: [{ snapshot: queued, attempts: [], holds: [{ ...held, from_route: 3 }] }] });
  try {
    assert.equal(await row(app.page, 8).locator(".badge.state-queued").textContent(), "Queued");
    assert.equal(
      await row(app.page, 8).locator("[data-testid=queued]").textContent(),
      queued.queued.charAt(0).toUpperCase() + queued.queued.slice(1),
      "the engine's fragment stands alone in the row: upper-case first",
    );
    await row(app.page, 8).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.getByRole("heading", { name: "Not dispatched" }).waitFor();
    const shown = await app.page.evaluate(() =>
      new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" }).format(
        new Date("2026-12-05T13:02:00Z"),
      ),
    );
    assert.equal(
      await detail.locator("[data-testid=hold-text]").textContent(),
      `Not dispatched: Claude Code (~/.claude-work) limited until ${shown}; wait for the hard reset until ${shown}`,
      "standing alone it starts upper-case, and its instants read like every other time",
    );
    assert.equal(
      await detail.getByTestId("hold-where").textContent(),
      "candidate 1, on Claude Code (~/.claude-work)",
      "the account by the name the Accounts tab gives it",
    );
    const hold = detail.getByTestId("hold");
    const words = await hold.innerText();
    assert.doesNotMatch(words, /usage_limit_reached|claude_code\./, `the hold reads in words: ${words}`);
    assert.match(words, /Engine details \(the limit's code and rule\)/, "code and rule are folded, and it says so");
    await hold.getByTestId("hold-internals").locator("summary").click();
    assert.match(
      (await hold.getByTestId("hold-internals").innerText()).replace(/\s+/g, " "),
      /Code usage_limit_reached Rule claude_code\.usage_limit_epoch\.v1 Catalogue 2026\.12\.5/,
    );
    assert.ok(!(await detail.textContent()).includes("claude-code#"), "no account id where a person reads the route");
    assert.deepEqual(
      await detail
        .locator("button")
        .allTextContents()
        .then((t) => t.filter((x) => /Skip now|Cancel wait|Stop/.test(x))),
      ["Skip now", "Cancel wait", "Stop"],
      "a queued route can be skipped, cancelled or stopped",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

// Issue 30's outside review: "Attempts dispatched 0" beside a "Last failure"
// read as a contradiction when the failure was another route's account limit.
test("a route held back before its first dispatch says it was held by its account's limit learned from another route", async () => {
  const limit = {
    code: "usage_limit_reached",
    class: "hard",
    rule_id: "claude_code.usage_limit_epoch.v1",
    catalogue_version: "2026.12.5",
  };
  const held = {
    generation: 2,
    candidate_index: 0,
    candidate_name: "Claude",
    at: iso(-30e3),
    account: "claude-code#3f9a1c2b7d0e",
    account_name: "Claude Code (~/.claude-work)",
    from_route: 1,
    classification: limit,
    until: iso(60e3),
    text: "not dispatched: work limited until 2026-12-05T13:02:00Z; wait for the hard reset until 2026-12-05T13:02:00Z",
  };
  const waiting = snapshot(2, "waiting_reset", {
    attempts: 0,
    deadline: iso(60e3),
    last_failure: failure(limit),
    actions: ["retry_now", "skip_now", "cancel_wait", "stop"],
  });
  const app = await openApp({ routes: [{ snapshot: waiting, attempts: [], holds: [held] }] });
  try {
    assert.equal(
      (await row(app.page, 2).getByTestId("failed-candidate").textContent()).trim(),
      "Held back by its account's limit, on candidate 1 “Claude”:",
      "with nothing dispatched, the failure is named as the limit that held it back",
    );
    await row(app.page, 2).click();
    const detail = app.page.locator("[data-testid=route-detail]");
    await detail.getByTestId("hold").waitFor();
    assert.equal(
      await detail.getByTestId("attempts-dispatched").textContent(),
      "0: not dispatched yet: held back by the limit of Claude Code (~/.claude-work), learned from route 1",
      "the account by its name, not its id",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});
