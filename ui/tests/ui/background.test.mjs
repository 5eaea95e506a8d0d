// Background mode in the window, against the fake backend: start at login
// through the autostart plugin's IPC, pausing new dispatches from the route
// list, and the close question the backend asks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { demoProfile } from "./fixtures.mjs";
import { openApp, horizontalOverflow, smallTargets } from "./lib.mjs";

const pluginCalls = async (app) =>
  (await app.calls()).map((c) => c.cmd).filter((cmd) => cmd.startsWith("plugin:autostart"));

test("start at login is off by default and the switch enables and disables it through the plugin", async () => {
  const app = await openApp({}, { hash: "#/settings" });
  try {
    const toggle = app.page.getByRole("switch", { name: "Start Recourse at login" });
    await toggle.waitFor();
    await app.page.waitForFunction(() => window.__CALLS__.some((c) => c.cmd === "plugin:autostart|is_enabled"));
    assert.equal(await toggle.getAttribute("aria-checked"), "false", "off by default");
    await toggle.click();
    await app.page.waitForFunction(() => window.__BACKEND__.autostart === true);
    assert.equal(await toggle.getAttribute("aria-checked"), "true");
    await toggle.click();
    await app.page.waitForFunction(() => window.__BACKEND__.autostart === false);
    assert.equal(await toggle.getAttribute("aria-checked"), "false");
    assert.deepEqual(await pluginCalls(app), [
      "plugin:autostart|is_enabled",
      "plugin:autostart|enable",
      "plugin:autostart|is_enabled",
      "plugin:autostart|disable",
      "plugin:autostart|is_enabled",
    ]);
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("start at login already on shows as on", async () => {
  const app = await openApp({ autostart: true }, { hash: "#/settings" });
  try {
    const toggle = app.page.getByRole("switch", { name: "Start Recourse at login" });
    await app.page.waitForFunction(() => document.querySelector("#autostart")?.getAttribute("aria-checked") === "true");
    assert.equal(await toggle.getAttribute("aria-checked"), "true");
  } finally {
    await app.close();
  }
});

test("the route list says Paused and resumes; a pause from the tray shows up live", async () => {
  const app = await openApp({ paused: true });
  try {
    const badge = app.page.getByTestId("paused-badge");
    await badge.waitFor();
    assert.equal(await badge.textContent(), "Paused");
    assert.match(await app.page.getByTestId("paused-notice").textContent(), /no agent starts/);
    await app.page.getByRole("button", { name: "Resume dispatches" }).click();
    await badge.waitFor({ state: "detached" });
    assert.equal(await app.page.evaluate(() => window.__BACKEND__.paused), false);
    // The tray's toggle: the backend emits the change.
    await app.emit("pause-changed", { paused: true });
    await badge.waitFor();
    await app.page.getByRole("button", { name: "Resume dispatches" }).waitFor();
  } finally {
    await app.close();
  }
});

test("closing while routes wait asks once; the remembered answer is sent and shown in Settings", async () => {
  const app = await openApp({});
  try {
    await app.emit("close-requested", {
      counts: { needs_you: 1, waiting: 2, running: 0 },
      quit_warning: "2 routes are waiting. They are kept with their deadlines.",
      unsaved: null,
      then: null,
    });
    const dialog = app.page.getByRole("dialog", { name: "Keep Recourse running in the tray while routes wait?" });
    await dialog.waitFor();
    assert.match(await dialog.textContent(), /2 routes are waiting/);
    assert.match(await app.page.getByTestId("quit-warning").textContent(), /kept with their deadlines/);
    await app.page.getByRole("switch", { name: /Remember my choice/ }).click();
    await dialog.getByRole("button", { name: "Keep running" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(await app.page.evaluate(() => window.__BACKEND__.closeAnswers), [
      { choice: "keep_running", remember: true },
    ]);
    await app.page.getByRole("link", { name: "Settings" }).click();
    const keep = app.page.getByRole("radio", { name: "Keep running in the tray" });
    await keep.waitFor();
    assert.equal(await keep.getAttribute("aria-checked"), "true");
    await app.page.getByRole("radio", { name: "Ask each time" }).click();
    await app.page.waitForFunction(() => window.__BACKEND__.closeChoice === null);
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("two quick changes in Settings are both saved, though the first is still being written", async () => {
  const app = await openApp({ slow: { set_settings: 400 } });
  try {
    await app.page.getByRole("link", { name: "Settings" }).click();
    await app.page.locator("#notify-succeeded").click();
    await app.page.locator("#notify-waiting").click();
    await app.page.waitForFunction(
      () => window.__CALLS__.filter((c) => c.cmd === "set_settings").length === 2,
      undefined,
      { timeout: 5000 },
    );
    await app.page.waitForTimeout(500);
    const notify = await app.page.evaluate(() => window.__BACKEND__.settings.notify);
    assert.deepEqual(notify, { needs_you: true, succeeded: true, waiting: true }, "neither change lost");
  } finally {
    await app.close();
  }
});

test("Escape keeps the window and sends no answer", async () => {
  const app = await openApp({});
  try {
    await app.emit("close-requested", {
      counts: { needs_you: 0, waiting: 1, running: 1 },
      quit_warning: "x",
      unsaved: null,
      then: null,
    });
    const dialog = app.page.getByTestId("close-dialog");
    await dialog.waitFor();
    assert.match(await dialog.textContent(), /1 route is waiting and 1 agent is running\./);
    await app.page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(await app.page.evaluate(() => window.__BACKEND__.closeAnswers), []);
  } finally {
    await app.close();
  }
});

test("Settings at 390×844: no sideways overflow, 44 px targets", async () => {
  const app = await openApp({}, { width: 390, height: 844, hash: "#/settings" });
  try {
    await app.page.getByRole("switch", { name: "Start Recourse at login" }).waitFor();
    const o = await horizontalOverflow(app.page);
    assert.ok(o.scrollWidth <= o.width, JSON.stringify(o));
    assert.deepEqual(await smallTargets(app.page), []);
  } finally {
    await app.close();
  }
});

const profileScenario = () => ({ profiles: [demoProfile()] });
const backend = (app, key) => app.page.evaluate((k) => window.__BACKEND__[k], key);

test("the profile editor tells the backend it holds unsaved edits, and when they are saved", async () => {
  const app = await openApp(profileScenario(), { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "Move Claude (simulated) down" }).click();
    await app.page.waitForFunction(() => window.__BACKEND__.unsavedReports.length === 1);
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.waitForFunction(() => window.__BACKEND__.unsavedReports.length === 2);
    assert.deepEqual(
      await backend(app, "unsavedReports"),
      ["Demo (simulated)", null],
      "closing asks only while there is something to lose",
    );
  } finally {
    await app.close();
  }
});

test("closing with unsaved edits asks save, discard or cancel; cancel keeps the window and the edits", async () => {
  const app = await openApp(profileScenario(), { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "Move Claude (simulated) down" }).click();
    const ask = () =>
      app.emit("close-requested", {
        counts: { needs_you: 0, waiting: 0, running: 0 },
        quit_warning: "",
        unsaved: "Demo (simulated)",
        then: "quit",
      });
    await ask();
    const dialog = app.page.getByRole("dialog", { name: "Save your changes to “Demo (simulated)” before quitting?" });
    await dialog.waitFor();
    assert.equal(await app.page.getByTestId("quit-warning").count(), 0, "nothing active: no route warning");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(await backend(app, "closeAnswers"), [], "cancel neither quits nor hides");
    assert.equal(await app.page.getByRole("status").first().textContent(), "Unsaved changes");

    await ask();
    await dialog.getByRole("button", { name: "Save changes" }).click();
    await dialog.waitFor({ state: "detached" });
    const saved = (await app.calls()).filter((c) => c.cmd === "save_candidates");
    assert.deepEqual(
      saved.at(-1).args.candidates.map((c) => c.name),
      ["Codex", "Claude (simulated)"],
      "the edits are saved before the app quits",
    );
    assert.deepEqual(await backend(app, "closeAnswers"), [{ choice: "quit", remember: false }]);
  } finally {
    await app.close();
  }
});

test("a refused save from the close question keeps the window open with the error shown", async () => {
  const app = await openApp(profileScenario(), { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    await app.page.locator("[data-testid=section-transient]").getByLabel("Retries", { exact: true }).fill("0");
    await app.emit("close-requested", {
      counts: { needs_you: 0, waiting: 0, running: 0 },
      quit_warning: "",
      unsaved: "Demo (simulated)",
      then: "quit",
    });
    await app.page.getByRole("dialog").getByRole("button", { name: "Save changes" }).click();
    await app.page.getByText("Not saved:", { exact: false }).waitFor();
    assert.deepEqual(await backend(app, "closeAnswers"), [], "nothing closes while the edits are not saved");
  } finally {
    await app.close();
  }
});

test("with routes waiting and unsaved edits, one question covers both: discard, then quit", async () => {
  const app = await openApp(profileScenario(), { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "Move Claude (simulated) down" }).click();
    await app.emit("close-requested", {
      counts: { needs_you: 0, waiting: 1, running: 0 },
      quit_warning: "1 route is waiting. It is kept with its deadline.",
      unsaved: "Demo (simulated)",
      then: null,
    });
    const dialog = app.page.getByRole("dialog", { name: "Save your changes to “Demo (simulated)” before closing?" });
    await dialog.waitFor();
    assert.match(await dialog.textContent(), /1 route is waiting/);
    assert.equal(await app.page.getByRole("dialog").count(), 1, "one dialog, not two");
    await dialog.getByRole("radio", { name: "Quit" }).click();
    await dialog.getByRole("button", { name: "Discard changes" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(await backend(app, "closeAnswers"), [{ choice: "quit", remember: false }]);
    assert.equal(
      await app.page.getByRole("status").first().textContent(),
      "All changes saved",
      "the edits were dropped",
    );
  } finally {
    await app.close();
  }
});
