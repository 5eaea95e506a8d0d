import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp, horizontalOverflow, smallTargets } from "./lib.mjs";
import { accountsOverview, limitedUntil } from "./fixtures.mjs";

function scenario() {
  return { accounts: accountsOverview() };
}

const card = (page, name) => page.locator("[data-testid=account]", { has: page.getByRole("heading", { name }) });

test("each account shows its state with a live countdown, its mark in words (code and rule in Engine details), routes waiting and running of its limit", async () => {
  // The mark ends in 90 s, so the countdown shows seconds and ticks each one
  // (from an hour away it reads `1 h 5 min` and moves once a minute).
  const soon = scenario();
  const work0 = soon.accounts.accounts[0];
  work0.status.until = work0.marks[0].until = new Date(Date.now() + 90e3).toISOString();
  const app = await openApp(soon, { hash: "#/accounts" });
  try {
    const work = card(app.page, "work");
    assert.equal(await work.locator("[data-testid=account-status]").textContent(), "Limited");
    const state = await work.locator("[data-testid=account-state]").textContent();
    assert.match(
      state,
      /^Limited until .+ \(in 1 min [23]\d s\)\.$/,
      "counts down to the mark's end, in the app's one duration style",
    );
    await app.page.waitForTimeout(1100);
    assert.notEqual(await work.locator("[data-testid=account-state]").textContent(), state, "the countdown ticks");
    const marked = work.locator("[data-testid=mark]");
    const mark = await marked.innerText();
    assert.match(mark, /\(the provider's reset\); from route 3, attempt 1/);
    assert.doesNotMatch(mark, /usage_limit_reached|claude_code\./, `words where a person reads: ${mark}`);
    assert.match(mark, /Engine details \(the limit's code and rule\)/, "the code and rule are folded, and it says so");
    await marked.getByTestId("mark-internals").locator("summary").click();
    const facts = (await marked.getByTestId("mark-internals").innerText()).replace(/\s+/g, " ");
    assert.match(facts, /Code usage_limit_reached Rule claude_code\.usage_limit_epoch\.v1/, "one click shows them");
    assert.equal(await work.locator("[data-testid=running]").textContent(), "1 running of 2");
    assert.deepEqual(await work.locator("[data-testid=waiting] button").allTextContents(), [
      "Route 3",
      "Route 4",
      "Route 5",
    ]);
    assert.equal(
      await work.getByRole("img").getAttribute("aria-label"),
      "Last 24 hours: 3 succeeded, 1 failed transient, 2 failed hard, 0 other.",
      "the chart is described in words",
    );
    const derived = card(app.page, "Claude Code account of “opus”");
    const derivation = derived.getByTestId("account-derivation");
    assert.equal(
      (await derivation.innerText()).replace(/\s+/g, " ").trim(),
      "Worked out from the candidate's settings (config folder, credentials and endpoint), as no account label is set: candidates with the same ones share this account. ID for the CLI: claude-code#3f9a1c2b7d0e",
      "the backend's words for how it was worked out, then the id as secondary detail, labelled for its use",
    );
    const id = derived.getByTestId("account-id");
    const [idSize, wordsSize] = await Promise.all(
      [id, derivation].map((l) => l.evaluate((e) => parseFloat(getComputedStyle(e).fontSize))),
    );
    assert.ok(idSize < wordsSize, `the id is smaller than the words beside it: ${idSize} < ${wordsSize}`);
    assert.doesNotMatch(await derived.textContent(), /Derived account/, "no jargon");
    assert.equal(
      await work.getByTestId("account-derivation").count(),
      0,
      "a labelled account was named, not worked out",
    );
    assert.match(await derived.locator("[data-testid=account-state]").textContent(), /route 9 is trying it/);
    assert.equal(await derived.locator("[data-testid=clear]").count(), 0, "nothing to clear without a mark");
    assert.match(await app.page.locator("[data-testid=global]").textContent(), /1 agent running of at most 4\./);
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("clear asks first; cancelling sends nothing, confirming clears and says so", async () => {
  const app = await openApp(scenario(), { hash: "#/accounts" });
  try {
    const work = card(app.page, "work");
    await work.getByRole("button", { name: "Clear…" }).click();
    const dialog = app.page.getByRole("dialog");
    assert.match(await dialog.textContent(), /Clear “work”\?.*dispatch again/s);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    assert.equal((await app.calls()).filter((c) => c.cmd === "clear_account").length, 0);
    await work.getByRole("button", { name: "Clear…" }).click();
    await app.page.getByRole("dialog").getByRole("button", { name: "Clear", exact: true }).click();
    await app.page.waitForFunction(
      () => document.querySelector("[data-testid=account] [data-testid=account-status]")?.textContent === "Ready",
    );
    const calls = (await app.calls()).filter((c) => c.cmd === "clear_account");
    assert.deepEqual(
      calls.map((c) => c.args),
      [{ account: "work" }],
    );
    // Said a moment after the live region is emptied, so the same words twice are said twice.
    await app.page
      .locator("[data-testid=announcer]", { hasText: "work: 1 limit mark cleared" })
      .waitFor({ state: "attached" });
  } finally {
    await app.close();
  }
});

test("a waiting route opens in the Routes area", async () => {
  const app = await openApp(scenario(), { hash: "#/accounts" });
  try {
    await card(app.page, "work").getByRole("button", { name: "Route 4" }).click();
    await app.page.waitForFunction(() => location.hash === "#/routes");
    const details = (await app.calls()).filter((c) => c.cmd === "route_detail").map((c) => c.args.id);
    assert.ok(details.includes(4), `route 4 was opened: ${details}`);
  } finally {
    await app.close();
  }
});

test("a new mark reloads the view", async () => {
  const app = await openApp(scenario(), { hash: "#/accounts" });
  try {
    const before = (await app.calls()).filter((c) => c.cmd === "accounts").length;
    await app.emit("account-marked", {
      account: "work",
      name: "work",
      code: "usage_limit_reached",
      until: limitedUntil,
      waiting: 1,
    });
    await app.page.waitForFunction((n) => window.__CALLS__.filter((c) => c.cmd === "accounts").length > n, before);
  } finally {
    await app.close();
  }
});

test("on a phone the accounts fit the width with 44 px targets", async () => {
  const app = await openApp(scenario(), { hash: "#/accounts", width: 390, height: 844 });
  try {
    const overflow = await horizontalOverflow(app.page);
    assert.equal(overflow.scrollWidth, overflow.width, `nothing sticks out: ${overflow.over}`);
    assert.deepEqual(await smallTargets(app.page), []);
  } finally {
    await app.close();
  }
});

test("settings set the global maximum of running agents, refuse one out of bounds, and turn it off", async () => {
  const app = await openApp(scenario(), { hash: "#/settings" });
  try {
    const field = app.page.getByLabel("Most agents running at once");
    assert.equal(await field.inputValue(), "4", "the saved maximum");
    const save = app.page.getByRole("button", { name: "Save" });
    assert.equal(await save.isDisabled(), true);
    assert.equal(
      await save.evaluate((b) => document.getElementById(b.getAttribute("aria-describedby"))?.textContent),
      "Nothing to save: this is the saved limit.",
      "a greyed Save says why, where it is seen",
    );
    await field.fill("300");
    await app.page.getByRole("button", { name: "Save" }).click();
    assert.match(
      await app.page.locator(".field-error").textContent(),
      /must be 1 to 256 running agents \(300 is too many\)/,
      "the backend's bound, at the field",
    );
    await field.fill("2");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByRole("switch", { name: "Limit how many agents run at once" }).click();
    await app.page.getByRole("button", { name: "Save" }).click();
    const sent = (await app.calls()).filter((c) => c.cmd === "set_max_running").map((c) => c.args.max);
    assert.deepEqual(sent, [300, 2, null]);
  } finally {
    await app.close();
  }
});
