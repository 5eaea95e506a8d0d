// Run again of a route whose agent may already have done its work (the
// safety gate held it, or it was stopped while it ran): the form says so and
// Start run asks first, as every other action that may repeat work does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { demoProfile, routeSnapshot } from "./fixtures.mjs";

const RISK = "the safety gate held it: a tool ran (Bash) before the stream dropped";

const scenario = (repeat_risk) => ({
  profiles: [demoProfile()],
  routes: [
    {
      snapshot: routeSnapshot(7, "needs_manual", { repeat_risk, actions: ["retry_now", "stop"] }),
      attempts: [],
      prompt: "Migrate the users table",
      profile_id: 1,
    },
  ],
});

const startCalls = async (app) => (await app.calls()).filter((c) => c.cmd === "start_run");

test("run again of a route that may have done its work says so, and Start run asks before sending", async () => {
  const app = await openApp(scenario(RISK));
  try {
    await app.page.locator('[data-route="7"]').click();
    await app.page.getByTestId("run-again").click();
    const warning = app.page.getByTestId("run-again-risk");
    assert.equal(
      (await warning.textContent()).trim(),
      "Route 7 may repeat work; Start run asks first.",
      "the form names the route beside Start run; why is one Why… away",
    );
    const form = app.page.getByTestId("start-run");
    await form.getByRole("button", { name: "Start run" }).click();
    const dialog = app.page.getByRole("dialog");
    await dialog.getByRole("heading", { name: "Start run: this may repeat work" }).waitFor();
    assert.match(
      await dialog.textContent(),
      /The safety gate held it.*Start run sends the prompt of route 7 to an agent again/,
      "the risk is said once, then what the button does",
    );
    assert.equal((await startCalls(app)).length, 0, "nothing is sent while the question is open");

    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.equal((await startCalls(app)).length, 0, "Cancel sends nothing");

    await form.getByRole("button", { name: "Start run" }).click();
    await app.page.getByRole("dialog").getByRole("button", { name: "Start run anyway" }).click();
    await app.page.waitForFunction(() => window.__CALLS__.some((c) => c.cmd === "start_run"));
    const [call] = await startCalls(app);
    assert.equal(call.args.request.prompt, "Migrate the users table");
    await warning.waitFor({ state: "detached" });
  } finally {
    await app.close();
  }
});

test("run again of a route without a repeat risk starts at once, with no warning", async () => {
  const app = await openApp(scenario(null));
  try {
    await app.page.locator('[data-route="7"]').click();
    await app.page.getByTestId("run-again").click();
    await app.page.getByTestId("start-run").getByRole("button", { name: "Start run" }).click();
    await app.page.waitForFunction(() => window.__CALLS__.some((c) => c.cmd === "start_run"));
    assert.equal(await app.page.getByTestId("run-again-risk").count(), 0);
    assert.equal(await app.page.getByRole("dialog").count(), 0, "no question for a route that did no work");
  } finally {
    await app.close();
  }
});

// Issue 30's outside review: the warning stayed after the prompt or the
// profile was changed, and after the route was deleted.
test("the repeat warning follows the form: gone for another prompt or profile, back for the route's own, gone with the route", async () => {
  const s = scenario(RISK);
  s.profiles.push({ ...demoProfile(), id: 2, name: "Other" });
  const app = await openApp(s);
  try {
    await app.page.locator('[data-route="7"]').click();
    await app.page.getByTestId("run-again").click();
    const warning = app.page.getByTestId("run-again-risk");
    await warning.waitFor();
    const prompt = app.page.getByLabel("Prompt");
    await prompt.fill("Write the release notes");
    await warning.waitFor({ state: "detached" });
    await prompt.fill("Migrate the users table");
    await warning.waitFor();
    await app.page.getByLabel("Profile").selectOption("2");
    await warning.waitFor({ state: "detached" });
    await app.page.getByLabel("Profile").selectOption("1");
    await warning.waitFor();
    // Deleted (here or in another window): the backend says it is gone.
    await app.emit("routes-removed", [7]);
    await warning.waitFor({ state: "detached" });
    await app.page.getByTestId("start-run").getByRole("button", { name: "Start run" }).click();
    await app.page.waitForFunction(() => window.__CALLS__.some((c) => c.cmd === "start_run"));
    assert.equal(await app.page.getByRole("dialog").count(), 0, "no question about a route that is gone");
  } finally {
    await app.close();
  }
});

// The fifth outside review: Run again… silently replaced a prompt written and
// not sent. It asks first; Cancel keeps the draft and focus on Run again….
test("run again over an unsent prompt asks first: Cancel keeps it, Replace prompt fills the route's", async () => {
  const app = await openApp(scenario(null));
  try {
    const prompt = app.page.getByTestId("start-run").getByLabel("Prompt");
    await prompt.fill("My own draft, not sent");
    await app.page.locator('[data-route="7"]').click();
    const again = app.page.getByTestId("run-again");
    await again.focus();
    await app.page.keyboard.press("Enter");
    const ask = app.page.getByRole("dialog", { name: "Replace the prompt you wrote?" });
    await ask.waitFor();
    await app.page.keyboard.press("Escape");
    await ask.waitFor({ state: "detached" });
    assert.equal(await prompt.inputValue(), "My own draft, not sent", "Cancel keeps the draft");
    assert.equal(await again.evaluate((b) => b === document.activeElement), true, "focus is back on Run again…");
    await again.click();
    await ask.getByRole("button", { name: "Replace prompt" }).click();
    await app.page.waitForFunction(() => document.querySelector("#run-prompt")?.value === "Migrate the users table");
    // The route's own prompt in the form: nothing of the person's to lose, no question.
    await again.click();
    await app.page.waitForTimeout(100);
    assert.equal(await app.page.getByRole("dialog").count(), 0, "no question when the form holds the route's prompt");
  } finally {
    await app.close();
  }
});
