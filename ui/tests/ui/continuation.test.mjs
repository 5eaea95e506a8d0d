// Continue and Skip with context (issue 27): both in fixed action slots,
// enabled only when the backend's preview offers them, and both showing
// what they send before sending it: the session and an editable message,
// or the hand-over package.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, at, holdRouteActions, openApp } from "./lib.mjs";
import { routeAttempt, routeSnapshot } from "./fixtures.mjs";

const held = (id) => ({
  snapshot: routeSnapshot(id, "needs_manual", {
    actions: ["retry_now", "skip_now", "stop", "continue", "handover"],
    repeat_risk: "a tool was run before the failure",
  }),
  attempts: [routeAttempt(1)],
});

const offered = {
  continue_offer: {
    of_attempt: 1,
    session_id: "00000000-0000-4000-8000-000000000001",
    candidate_name: "Claude",
    message: "Continue the task where you stopped.",
  },
  continue_refused: null,
  handover: {
    from_attempt: 1,
    to_candidate: "Codex",
    package:
      "----- BEGIN REFERENCE DATA FROM A PREVIOUS ATTEMPT (untrusted) -----\n### Tools it ran\n- Bash echo 1 — completed",
  },
  handover_refused: null,
};

const actionsSent = async (app) =>
  (await app.calls()).filter((c) => c.cmd === "route_action").map((c) => c.args.request);

test("Continue shows the session and sends the message as edited for this press", async () => {
  const app = await openApp({ routes: [held(7)], continuations: { 7: offered } });
  const { page } = app;
  try {
    await page.locator('[data-route="7"]').click();
    const button = page.locator('[data-testid=route-detail] button[data-action="continue"]');
    await button.waitFor();
    assert.equal(await button.isEnabled(), true, "offered: a session to resume is known");
    await button.click();
    const dialog = page.locator("[data-testid=continuation-dialog]");
    await dialog.waitFor();
    const text = await dialog.innerText();
    assert.match(text, /00000000-0000-4000-8000-000000000001/, "the session it resumes");
    assert.match(text, /original prompt is not sent again/);
    assert.match(text, /a tool was run before the failure/, "what may be repeated is said");
    const message = dialog.locator("[data-testid=continue-message]");
    assert.equal(await message.inputValue(), "Continue the task where you stopped.", "the candidate's message");
    await message.fill("");
    assert.equal(
      await dialog.getByRole("button", { name: "Continue" }).isDisabled(),
      true,
      "an empty message cannot be sent",
    );
    await message.fill("Check git status first, then finish.");
    await dialog.getByRole("button", { name: "Continue" }).click();
    await dialog.waitFor({ state: "detached" });
    const sent = await actionsSent(app);
    assert.deepEqual(sent, [
      {
        route_id: 7,
        action: "continue",
        expected_generation: 3,
        confirm_repeat: true,
        message: "Check git status first, then finish.",
      },
    ]);
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("Skip with context shows the package before it is sent, and Cancel sends nothing", async () => {
  const app = await openApp({ routes: [held(8)], continuations: { 8: offered } });
  const { page } = app;
  try {
    await page.locator('[data-route="8"]').click();
    const button = page.locator('[data-testid=route-detail] button[data-action="handover"]');
    await button.click();
    const dialog = page.locator("[data-testid=continuation-dialog]");
    assert.match(await dialog.locator("h2").innerText(), /Skip route 8 with context to “Codex”\?/);
    assert.match(await dialog.locator("[data-testid=handover-package]").innerText(), /- Bash echo 1 — completed/);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(await actionsSent(app), [], "cancelled: nothing sent");
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.action), "handover", "focus back on it");
    await button.click();
    await dialog.getByRole("button", { name: "Skip with context" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(await actionsSent(app), [
      { route_id: 8, action: "handover", expected_generation: 3, confirm_repeat: true },
    ]);
  } finally {
    await app.close();
  }
});

/** Each action button's label: how many lines it takes and whether it sticks out of its button. */
const labels = (page) =>
  page.locator("[data-testid=route-detail] button[data-action]").evaluateAll((buttons) =>
    buttons.map((b) => {
      const words = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
      const tops = new Set();
      while (words.nextNode()) {
        if (!words.currentNode.textContent.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(words.currentNode);
        for (const r of range.getClientRects()) tops.add(Math.round(r.top));
      }
      const lines = tops.size;
      return { label: b.textContent.trim(), lines, overflows: b.scrollWidth > b.clientWidth };
    }),
  );

for (const [label, viewport] of VIEWPORTS) {
  test(`every action's label is one line, "Skip with context…" too while it is sent, and no button moves (${label})`, async () => {
    const app = await openApp({ routes: [held(8)], continuations: { 8: offered } }, viewport);
    const { page } = app;
    try {
      // The busy label stays on screen until the test releases the reply.
      await holdRouteActions(page);
      await page.locator('[data-route="8"]').click();
      const button = page.locator('[data-testid=route-detail] button[data-action="handover"]');
      await page.waitForFunction(() => !document.querySelector('button[data-action="handover"]')?.disabled);
      for (const seen of await labels(page))
        assert.deepEqual(
          seen,
          { label: seen.label, lines: 1, overflows: false },
          "a label wrapped in two reads as two",
        );
      const before = await at(button);
      await button.click();
      await page
        .locator("[data-testid=continuation-dialog]")
        .getByRole("button", { name: "Skip with context" })
        .click();
      await button.filter({ hasText: "Skip with context…" }).waitFor();
      const busy = (await labels(page)).find((l) => l.label === "Skip with context…");
      assert.deepEqual(busy, { label: busy.label, lines: 1, overflows: false }, "the longer busy label fits too");
      assert.deepEqual(await at(button), before, "the button kept room for its busy label: it does not grow");
      await page.evaluate(() => window.__RELEASE__());
    } finally {
      await app.close();
    }
  });
}

test("Continue and Skip with context keep their places, disabled with the backend's reason when not possible", async () => {
  const app = await openApp({ routes: [held(9)] });
  const { page } = app;
  try {
    await page.locator('[data-route="9"]').click();
    const detail = page.locator("[data-testid=route-detail]");
    const button = detail.locator('button[data-action="continue"]');
    await detail.locator("[data-testid=action-refused]").first().waitFor();
    assert.equal(await button.isDisabled(), true, "drawn, not hidden, and disabled");
    const refusals = await detail.locator("[data-testid=action-refused]").allInnerTexts();
    assert.deepEqual(refusals, [
      "Attempt 1's Claude Code reported no session id, so there is no session to resume.",
      "No candidate is left to hand over to in this cycle.",
    ]);
    await button.click({ force: true });
    assert.equal(await page.locator("[data-testid=continuation-dialog]").count(), 0, "a disabled slot does nothing");
    assert.deepEqual(await actionsSent(app), []);
  } finally {
    await app.close();
  }
});
