import { test } from "node:test";
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { VIEWPORTS, at, openApp, clippedOptions, horizontalOverflow, smallTargets, scrollOwners } from "./lib.mjs";
import { candidate, demoProfile, immediate, POLICY_LIMITS, previewStep } from "./fixtures.mjs";

const open = (opts = {}) => openApp({ profiles: [demoProfile()] }, { hash: "#/profiles", ...opts });
const saveCalls = async (app) => (await app.calls()).filter((c) => c.cmd === "save_candidates");

test("each candidate row summarises its policy on one line", async () => {
  const app = await open();
  try {
    // The summary is the backend's answer, which arrives after the row.
    await app.page.getByText("[backend summary] transient skip; hard skip").waitFor();
    const summaries = await app.page.getByTestId("policy-summary").allTextContents();
    assert.deepEqual(summaries, [
      "[backend summary] transient 3× from 5 s, skip; hard stop",
      "[backend summary] transient skip; hard skip",
    ]);
  } finally {
    await app.close();
  }
});

test("expanded candidate shows the backend's schedule for the draft, naming the next candidate", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    const transient = app.page.getByTestId("schedule-transient");
    // The fake answers with its arguments: the UI shows the backend's words
    // as given, for the draft as it is now.
    await app.page.getByText("[backend schedule] 3× from 5 s, then skip to Codex").waitFor();
    await app.page.getByText("[backend schedule] no retry, then stop to Codex").waitFor();
    assert.equal(await transient.textContent(), "[backend schedule] 3× from 5 s, then skip to Codex");
    assert.equal(
      await app.page.getByTestId("schedule-hard").textContent(),
      "[backend schedule] no retry, then stop to Codex",
    );
    await app.page.locator("[data-testid=section-transient] input:enabled").first().fill("4");
    await app.page.getByText("[backend schedule] 4× from 5 s, then skip to Codex").waitFor();
    assert.equal(
      await transient.textContent(),
      "[backend schedule] 4× from 5 s, then skip to Codex",
      "an edit asks the backend again; the UI works out no delay itself",
    );
    assert.ok(
      await app.page.getByText("Temporary trouble that usually clears by itself", { exact: false }).isVisible(),
      "class explanations are visible text, not hover-only",
    );
  } finally {
    await app.close();
  }
});

test("policy fields state the limits the backend exports", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    await app.page.locator("[data-testid=section-transient]").getByRole("switch").first().click();
    const field = (label) => app.page.locator("[data-testid=section-transient]").getByLabel(label, { exact: true });
    const help = async (label) =>
      app.page.locator(`#${await field(label).getAttribute("aria-describedby")}`).textContent();
    const { max_retries } = POLICY_LIMITS;
    // The generated bindings are checked against Rust by the bindings test,
    // so these are the validator's own bounds.
    assert.equal(await help("Retries"), `${max_retries.min}–${max_retries.max}`);
    // “5 s” and “5 min” say their value already: no “= 300 s (5 min)” in a second style beside them.
    assert.equal((await help("First delay")).trim(), "1 s – 1 h, doubles each time");
    assert.equal(
      (await help("Longest wait")).trim(),
      "1 s – 7 d. A reset further away is never shortened to fit: the next step applies instead.",
    );
  } finally {
    await app.close();
  }
});

test("an out-of-range value shows the backend's field error inline and blocks nothing silently", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    const retries = app.page.locator("[data-testid=section-transient] input:enabled").first();
    await retries.fill("0");
    await app.page.getByText("must be 1–10 when enabled (0 is too few)").waitFor();
    assert.equal(await retries.getAttribute("aria-invalid"), "true");
    assert.ok(
      (await app.calls()).some((c) => c.cmd === "check_policy" && c.args.index === 0),
      "validation comes from the backend validator",
    );
    await app.page.getByRole("button", { name: "Save" }).click();
    // What to do in one line, then the backend's words, whole when the message is opened.
    const message = app.page.getByTestId("save-message");
    await message.getByText("Not saved: 1 field needs fixing — see the marked fields.", { exact: false }).waitFor();
    assert.match(await message.textContent(), /candidates\[0\]\.transient\.retry\.max_retries/);
    assert.equal((await saveCalls(app)).length, 1, "save was attempted and refused by the backend");
  } finally {
    await app.close();
  }
});

test("a save the backend refuses with several problems shows each at its own field", async () => {
  const app = await open();
  try {
    // Each opened row's button turns into "Collapse", so the first "Edit policy" is the next closed row.
    for (let i = 0; i < 2; i++) await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    await app.page.getByLabel("Name").nth(0).fill("x");
    await app.page.getByLabel("Name").nth(1).fill("x");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Not saved:", { exact: false }).waitFor();
    const shown = await app.page.locator("[data-testid=candidate-row] .field-error").allTextContents();
    assert.deepEqual(
      shown,
      ['duplicate candidate name "x" (also candidates[0])'],
      "the error appears at the later row's name, as the backend worded it, with no path left in",
    );
    await app.page.getByLabel("Name").nth(0).fill("");
    await app.page.locator(".field-error", { hasText: "must not be empty" }).waitFor();
    assert.deepEqual(
      await app.page.locator("[data-testid=candidate-row] .field-error").allTextContents(),
      ["must not be empty"],
      "an empty first name is its own problem; the second row is no longer a duplicate",
    );
  } finally {
    await app.close();
  }
});

test("moving a candidate down by button reorders it and save sends the new order with the revision", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Move Claude (simulated) down" }).click();
    const names = await app.page.locator("[data-testid=candidate-row] .name").allTextContents();
    assert.deepEqual(names, ["Codex", "Claude (simulated)"]);
    assert.equal(
      await app.page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
      "Move Claude (simulated) up",
      "focus follows the moved row so keyboard users can keep moving it",
    );
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("All changes saved").waitFor();
    const [call] = await saveCalls(app);
    assert.equal(call.args.expectedRevision, 1);
    assert.deepEqual(
      call.args.candidates.map((c) => c.name),
      ["Codex", "Claude (simulated)"],
    );
  } finally {
    await app.close();
  }
});

test("a new candidate starts from its kind's defaults, shown with why, and a switched-on wait fits the kind", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "+ Add candidate" }).click();
    await app.page.getByLabel("Add a candidate: search agent kinds").fill("gemi");
    await app.page.keyboard.press("Enter");
    const rows = app.page.getByTestId("candidate-row");
    assert.equal(await rows.count(), 3);
    // The backend's starter for Gemini CLI: a hard failure waits for the daily reset.
    await rows.nth(2).getByText("[backend summary] transient 3× from 10 s, skip; hard wait ≤ 86400 s, skip").waitFor();
    assert.match(
      await rows.nth(2).getByTestId("starter-why").textContent(),
      /New Gemini CLI candidate: .*Gemini CLI.s free quota is counted per day and resets at midnight Pacific time/s,
      "the defaults are shown with why, never applied silently",
    );
    assert.equal(await app.page.getByRole("status").first().textContent(), "Unsaved changes");
    // Turning on the transient reset wait starts from the kind's value, not a fixed 5 min.
    await rows.nth(2).getByRole("button", { name: "Edit policy" }).click();
    await rows.nth(2).getByTestId("section-hard").getByRole("switch", { name: "Retry the same candidate" }).click();
    await rows
      .nth(2)
      .getByText("[backend summary] transient 3× from 10 s, skip; hard wait ≤ 86400 s, 2× from 60 s, skip")
      .waitFor();
  } finally {
    await app.close();
  }
});

// An outside review: the note said "Change them under Edit policy" while
// that button, the policy open, read "Collapse".
test("a new candidate's note names where to change its policy as the button reads, open or closed", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "+ Add candidate" }).click();
    await app.page.getByLabel("Add a candidate: search agent kinds").fill("gemi");
    await app.page.keyboard.press("Enter");
    const row = app.page.getByTestId("candidate-row").nth(2);
    const note = row.getByTestId("starter-why");
    assert.match(await note.textContent(), /Change them under Edit policy\.\s*$/);
    await row.getByRole("button", { name: "Edit policy" }).click();
    await row.getByRole("button", { name: "Collapse" }).waitFor();
    assert.match(await note.textContent(), /Change them in the policy below\.\s*$/, "no button reads Edit policy now");
    const [noteBox, policyBox] = await Promise.all([
      note.boundingBox(),
      row.getByTestId("section-transient").boundingBox(),
    ]);
    assert.ok(policyBox.y > noteBox.y, "the policy is below the note");
  } finally {
    await app.close();
  }
});

test("leaving with unsaved changes asks save, discard or cancel; cancel keeps the edits, save saves them", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Move Claude (simulated) down" }).click();
    await app.page.getByRole("link", { name: "Catalogue" }).click();
    const dialog = app.page.getByRole("dialog");
    await dialog.getByText("Save your changes to “Demo (simulated)”?").waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    assert.equal(await app.page.locator("nav [aria-current=page]").textContent(), "Profiles");
    assert.equal(await app.page.getByRole("status").first().textContent(), "Unsaved changes");
    await app.page.getByRole("link", { name: "Catalogue" }).click();
    await app.page.getByRole("dialog").getByRole("button", { name: "Save changes" }).click();
    await app.page.locator("nav [aria-current=page]", { hasText: "Catalogue" }).waitFor();
    const saves = (await app.calls()).filter((c) => c.cmd === "save_candidates");
    assert.deepEqual(
      saves[0].args.candidates.map((c) => c.name),
      ["Codex", "Claude (simulated)"],
      "the edits were saved before leaving",
    );
    await app.page.getByRole("link", { name: "Profiles" }).click();
    await app.page.getByRole("button", { name: "Move Codex down" }).click();
    await app.page.getByRole("link", { name: "Catalogue" }).click();
    await app.page.getByRole("dialog").getByRole("button", { name: "Discard changes" }).click();
    assert.equal(await app.page.locator("nav [aria-current=page]").textContent(), "Catalogue");
  } finally {
    await app.close();
  }
});

test("preview shows the evaluator's decisions on the draft in the backend's words", async () => {
  const text = "transient retry 1 of 3 in 5s, at +5s";
  const app = await openApp(
    {
      profiles: [demoProfile()],
      preview: [previewStep(text)],
    },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByLabel("Example error").selectOption({ label: "Usage limit, resets in 1 min" });
    const line = app.page.getByTestId("preview-timeline").locator(".what");
    await line.waitFor();
    assert.equal(await line.textContent(), `→ ${text}`, "the step's text as the backend wrote it, nothing added");
    assert.equal(
      await app.page.getByTestId("preview-timeline").locator(".code").first().textContent(),
      "Provider overloaded",
      "the step's failure in words, not its code",
    );
    const last = (await app.calls()).filter((c) => c.cmd === "preview_policy").at(-1);
    assert.equal(last.args.failures[0].code, "usage_limit_reached");
    assert.equal(last.args.failures[0].reset_in_seconds, 60);
    assert.deepEqual(
      last.args.candidates.map((c) => [c.name, c.kind]),
      [
        ["Claude (simulated)", "simulated"],
        ["Codex", "codex"],
      ],
      "with their kinds: an any-command candidate is previewed as its real runs end",
    );
  } finally {
    await app.close();
  }
});

test("a preview the backend cut short says so after its last step, in the backend's words", async () => {
  const cut = "the preview stops here, after 100 steps; the route would go on by the same policy";
  const app = await openApp(
    { profiles: [demoProfile()], preview: [previewStep("transient retry 1 of 3 in 5 s, at +5 s")], previewCut: cut },
    { hash: "#/profiles" },
  );
  try {
    const said = app.page.getByTestId("preview-cut");
    await said.waitFor();
    assert.equal(
      await said.textContent(),
      "The preview stops here, after 100 steps; the route would go on by the same policy.",
      "a sentence after the list, so the walk never ends without a word",
    );
    const last = (await app.calls()).filter((c) => c.cmd === "preview_policy").at(-1);
    assert.equal(last.args.failures.length, 1, "one failure: the backend repeats it until the route's end");
  } finally {
    await app.close();
  }
  const whole = await openApp(
    { profiles: [demoProfile()], preview: [previewStep("transient retry 1 of 3 in 5 s, at +5 s")] },
    { hash: "#/profiles" },
  );
  try {
    await whole.page.getByTestId("preview-timeline").waitFor();
    assert.equal(await whole.page.getByTestId("preview-cut").count(), 0, "a whole walk needs no note");
  } finally {
    await whole.close();
  }
});

test("profile editor fits a phone: no sideways scroll, one scroll owner, 44 px targets", async () => {
  const app = await open({ width: 390, height: 844 });
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    await app.page.locator("[data-testid=section-hard]").getByRole("switch").first().click();
    const o = await horizontalOverflow(app.page);
    assert.ok(o.scrollWidth <= o.width && o.over.filter((x) => x !== "a.tab").length === 0, JSON.stringify(o));
    assert.deepEqual(await smallTargets(app.page), []);
    const owners = await scrollOwners(app.page);
    assert.ok(
      owners.every((o) => o === "main#main"),
      `only <main> scrolls: ${owners}`,
    );
  } finally {
    await app.close();
  }
});

test("at 390 px every preview example fits its drop-down, which spans the panel, and is said whole beneath it", async () => {
  const app = await open({ width: 390, height: 844 });
  try {
    const select = app.page.getByLabel("Example error");
    await select.waitFor();
    const fit = await clippedOptions(select);
    assert.deepEqual(fit.cut, [], `each label fits the ${fit.room} px inside the drop-down`);
    const [width, field] = await select.evaluate((el) => [
      el.getBoundingClientRect().width,
      el.parentElement.getBoundingClientRect().width,
    ]);
    assert.equal(width, field, "the drop-down takes the whole width of its field");
    const detail = app.page.getByTestId("preview-example-detail");
    assert.equal(await detail.textContent(), "Every attempt fails with the provider's 529 “overloaded”.");
    await select.selectOption({ label: "Reset while a tool ran" });
    assert.equal(
      await detail.textContent(),
      "The connection is reset while one of the agent's tools is still running.",
      "the short label is said in full beneath, where it can wrap",
    );
  } finally {
    await app.close();
  }
});

test("a CLI candidate's timeouts show their unit once, picked beside the number, and save exactly the seconds shown", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    const idle = app.page.getByLabel("Idle timeout", { exact: true });
    const idleUnit = app.page.getByLabel("Idle timeout unit");
    // The thirteenth outside review: the box read "15 min" beside a "min" picker.
    assert.deepEqual(
      [await idle.inputValue(), await idleUnit.inputValue()],
      ["15", "min"],
      "900 s in its largest exact unit, the unit said once: in its picker",
    );
    assert.deepEqual(
      [
        await app.page.getByLabel("Total timeout", { exact: true }).inputValue(),
        await app.page.getByLabel("Total timeout unit").inputValue(),
      ],
      ["4", "h"],
    );
    const help = app.page.locator(`[id="${await idle.getAttribute("id")}-help"]`);
    await idle.fill("20");
    assert.ok(!(await help.textContent()).includes("="), "a number in the picked unit, 20 min, says it already");
    await idle.fill("90 s");
    await help.getByText("= 1 min 30 s ·", { exact: false }).waitFor();
    await idle.press("Tab");
    assert.deepEqual(
      [await idle.inputValue(), await idleUnit.inputValue()],
      ["90", "s"],
      "a unit typed in the box moves to the picker once the box is left",
    );
    await idle.fill("ten minutes");
    await app.page.getByText("“ten minutes” is not a duration: write a number with s, min, h or d").waitFor();
    assert.equal(await idle.getAttribute("aria-invalid"), "true");
    await idle.fill("1.5");
    await idleUnit.selectOption("h");
    assert.equal(await idle.inputValue(), "1.5", "picking a unit keeps the number");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    const saved = (await saveCalls(app)).at(-1).args.candidates[1].agent;
    assert.deepEqual(saved.timeouts, { idle_s: 5400, total_s: 14400 });
  } finally {
    await app.close();
  }
});

test("environment variables are edited as rows and secret-looking values stay masked until shown", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    await app.page.getByRole("button", { name: "Add variable" }).click();
    await app.page.getByLabel("Variable 1 name").fill("OPENAI_API_KEY");
    const value = app.page.getByLabel("Variable OPENAI_API_KEY value");
    await value.fill("sk-test-not-a-real-key");
    await typeBecomes(app, "Variable OPENAI_API_KEY value", "password");
    assert.ok(
      (await app.calls()).some((c) => c.cmd === "secret_env" && c.args.env.OPENAI_API_KEY === "sk-test-not-a-real-key"),
      "the backend says which values look like secrets",
    );
    await app.page.getByRole("button", { name: "Show" }).click();
    assert.equal(await value.getAttribute("type"), "text");
    await app.page.getByRole("button", { name: "Add variable" }).click();
    await app.page.getByLabel("Variable 2 name").fill("HTTPS_PROXY");
    const proxy = app.page.getByLabel("Variable HTTPS_PROXY value");
    await proxy.fill("http://127.0.0.1:3128");
    await typeBecomes(app, "Variable HTTPS_PROXY value", "text");
    await app.page.getByLabel("Config directory (optional)").fill("/srv/codex-b");
    assert.ok(await app.page.getByText("Passed as CODEX_HOME").isVisible());
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    const agent = (await saveCalls(app)).at(-1).args.candidates[1].agent;
    assert.deepEqual(agent.env, { OPENAI_API_KEY: "sk-test-not-a-real-key", HTTPS_PROXY: "http://127.0.0.1:3128" });
    assert.equal(agent.config_dir, "/srv/codex-b");
    assert.ok(
      (await app.calls()).some((c) => c.cmd === "check_agent" && c.args.index === 1),
      "agent fields are checked by the backend's validator as they change",
    );
  } finally {
    await app.close();
  }
});

test("the editor says where each secret value lives: the keyring, or the database file when none runs", async () => {
  const reference = "recourse-keyring:0123456789abcdef0123456789abcdef";
  const profile = demoProfile();
  profile.candidates[1].agent.env = { ANTHROPIC_API_KEY: reference };
  const app = await openApp({ profiles: [profile] }, { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    const held = app.page.getByLabel("Variable ANTHROPIC_API_KEY value");
    await app.page.getByText("ANTHROPIC_API_KEY: in the keyring", { exact: true }).waitFor();
    assert.equal(await held.inputValue(), "", "nothing of the reference is shown");
    assert.equal(await held.getAttribute("placeholder"), "kept in the keyring: type to replace");
    assert.equal(await app.page.getByRole("button", { name: "Show" }).count(), 0, "nothing to show");
    const note = await held.getAttribute("aria-describedby");
    assert.ok(
      note && (await app.page.locator(`#${note}`).textContent()).includes("in the keyring"),
      "read with the field",
    );

    await app.page.getByRole("button", { name: "Add variable" }).click();
    await app.page.getByLabel("Variable 2 name").fill("OPENAI_API_KEY");
    await app.page.getByLabel("Variable OPENAI_API_KEY value").fill("sk-test-not-a-real-key");
    await app.page
      .getByText("OPENAI_API_KEY: in the database file, readable only by you: no keyring is running", { exact: true })
      .waitFor();

    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    const env = (await saveCalls(app)).at(-1).args.candidates[1].agent.env;
    assert.equal(env.ANTHROPIC_API_KEY, reference, "an untouched keyring value is saved as the reference it was");
  } finally {
    await app.close();
  }
});

test("a keyring value typed over while a keyring runs is said to go there on save", async () => {
  const profile = demoProfile();
  profile.candidates[1].agent.env = { ANTHROPIC_API_KEY: "recourse-keyring:0123456789abcdef0123456789abcdef" };
  const app = await openApp(
    { profiles: [profile], keyringRunning: true, secretEnv: ["ANTHROPIC_API_KEY"] },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    await app.page.getByText("ANTHROPIC_API_KEY: in the keyring", { exact: true }).waitFor();
    const held = app.page.getByLabel("Variable ANTHROPIC_API_KEY value");
    await held.fill("sk-ant-new-value-typed-here");
    await app.page.getByText("ANTHROPIC_API_KEY: goes to the keyring when you save", { exact: true }).waitFor();
    assert.equal(await held.inputValue(), "sk-ant-new-value-typed-here", "typing replaces it");
  } finally {
    await app.close();
  }
});

/** Waits until the input labelled `label` is of `type` (the backend's
 * answer about secrets arrives after the keystroke). */
async function typeBecomes(app, label, type) {
  await app.page.waitForFunction(
    ([l, t]) => document.querySelector(`[aria-label="${l}"]`)?.getAttribute("type") === t,
    [label, type],
    { timeout: 5000 },
  );
}

test("before the backend has said which values are secrets, every value is hidden", async () => {
  const profile = demoProfile();
  profile.candidates[1].agent.env = { HTTPS_PROXY: "http://127.0.0.1:3128" };
  const app = await openApp({ profiles: [profile], secretEnvPending: true }, { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    await app.page.waitForTimeout(200);
    assert.equal(
      await app.page.getByLabel("Variable HTTPS_PROXY value").getAttribute("type"),
      "password",
      "no answer yet: hidden, not guessed",
    );
  } finally {
    await app.close();
  }
});

test("an agent field error from the backend validator shows at its field", async () => {
  const app = await openApp(
    {
      profiles: [demoProfile()],
      agentErrors: [
        {
          path: "candidates[1].agent.timeouts.idle_s",
          message: "must be at most 4 h (1 d is too long)",
        },
      ],
    },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    await app.page.getByText("must be at most 4 h (1 d is too long)").waitFor();
    assert.equal(await app.page.getByLabel("Idle timeout", { exact: true }).getAttribute("aria-invalid"), "true");
  } finally {
    await app.close();
  }
});

test("export asks where to save, then writes the selected profile there", async () => {
  const app = await open();
  try {
    await openAndSave(app, { savePath: null });
  } finally {
    await app.close();
  }
  const saving = await openApp({ profiles: [demoProfile()], savePath: "/home/me/Demo.json" }, { hash: "#/profiles" });
  try {
    await saving.page.getByRole("button", { name: "Export…" }).click();
    await saving.page.getByRole("status").filter({ hasText: "Exported" }).waitFor();
    assert.equal(
      await saving.page.getByRole("status").filter({ hasText: "Exported" }).textContent(),
      "Exported “Demo (simulated)” to /home/me/Demo.json.",
    );
    const exports = (await saving.calls()).filter((c) => c.cmd === "export_profile");
    assert.deepEqual(
      exports.map((c) => c.args),
      [{ id: 1, path: "/home/me/Demo.json" }],
    );
  } finally {
    await saving.close();
  }
});

/** A cancelled save dialog exports nothing. */
async function openAndSave(app) {
  await app.page.getByRole("button", { name: "Export…" }).click();
  await app.page.waitForTimeout(100);
  const calls = await app.calls();
  assert.ok(
    calls.some((c) => c.cmd === "choose_path" && c.args.request.kind === "save_file"),
    "the native save dialog was asked",
  );
  assert.ok(!calls.some((c) => c.cmd === "export_profile"), "a cancelled dialog writes nothing");
}

const IMPORT_PREVIEW = {
  name: "Demo (simulated)",
  existing: { id: 1, revision: 1 },
  legacy: false,
  document_json: '{"version": 1}',
  changes: [
    {
      candidate: "Claude (simulated)",
      field: "transient.retry.max_retries",
      what: "Transient › Retries",
      before: "3",
      after: "5",
    },
    {
      candidate: "Claude (simulated)",
      field: "agent.env.ANTHROPIC_API_KEY",
      what: "Environment variable ANTHROPIC_API_KEY",
      before: null,
      after: "(hidden)",
    },
    { candidate: "Gemini", field: "candidate", what: "Added", before: null, after: "Gemini CLI at position 3" },
  ],
};

test("import shows what the file changes and saves only when confirmed", async () => {
  const imported = {
    ...demoProfile(),
    revision: 2,
    candidates: [
      ...demoProfile().candidates,
      candidate(13, "Gemini", "gemini", { transient: immediate("skip"), hard: immediate("skip") }),
    ],
  };
  const app = await openApp(
    { profiles: [demoProfile()], openPath: "/home/me/demo.json", importPreview: IMPORT_PREVIEW, imported },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByRole("button", { name: "Import from file…" }).click();
    const dialog = app.page.getByRole("dialog", { name: "Import “Demo (simulated)”" });
    await dialog.waitFor();
    const rows = await dialog.locator("tbody tr").allInnerTexts();
    assert.deepEqual(
      rows.map((r) => r.split("\t").map((c) => c.trim())),
      [
        ["Claude (simulated)", "Transient › Retries", "3", "5"],
        ["Claude (simulated)", "Environment variable ANTHROPIC_API_KEY", "—", "(hidden)"],
        ["Gemini", "Added", "—", "Gemini CLI at position 3"],
      ],
    );
    await dialog.getByRole("button", { name: "Cancel" }).click();
    assert.ok(!(await app.calls()).some((c) => c.cmd === "import_profile"), "cancel saves nothing");

    await app.page.getByRole("button", { name: "Import from file…" }).click();
    await dialog.getByRole("button", { name: "Replace “Demo (simulated)”" }).click();
    await app.page.getByRole("status").filter({ hasText: "Replaced" }).waitFor();
    const imports = (await app.calls()).filter((c) => c.cmd === "import_profile");
    assert.deepEqual(
      imports.map((c) => c.args),
      [{ documentJson: '{"version": 1}', replace: { id: 1, revision: 1 }, copyAs: null }],
      "the previewed document goes back with the revision the preview saw",
    );
    assert.equal(
      await app.page
        .getByRole("button", { name: /Demo \(simulated\)/ })
        .locator(".hint")
        .textContent(),
      "3 candidates",
    );
    assert.equal(
      await app.page.evaluate(() => document.activeElement?.id),
      "profile-heading",
      "focus lands on the imported profile",
    );
  } finally {
    await app.close();
  }
});

test("a profile replaced by an import keeps each row's summary line until the backend describes it anew", async () => {
  // The backend takes its time to describe a policy: the rows drawn for the
  // replaced profile must not stand blank (or short) meanwhile.
  const changed = { transient: immediate("stop"), hard: immediate("stop") };
  const imported = {
    ...demoProfile(),
    revision: 2,
    candidates: [
      demoProfile().candidates[0],
      { ...demoProfile().candidates[1], policy: { ...demoProfile().candidates[1].policy, ...changed } },
    ],
  };
  const app = await openApp(
    {
      profiles: [demoProfile()],
      openPath: "/home/me/demo.json",
      importPreview: IMPORT_PREVIEW,
      imported,
      slow: { policy_summary: 2500 },
    },
    { hash: "#/profiles" },
  );
  try {
    const summaries = app.page.getByTestId("policy-summary");
    await summaries.first().getByText("[backend summary]").waitFor({ timeout: 6000 });
    await summaries.nth(1).getByText("[backend summary]").waitFor({ timeout: 6000 });
    const first = (await summaries.first().textContent()).trim();
    const lineHeight = (await summaries.nth(1).boundingBox()).height;

    await app.page.getByRole("button", { name: "Import from file…" }).click();
    await app.page.getByRole("button", { name: "Replace “Demo (simulated)”" }).click();
    await app.page.getByRole("status").filter({ hasText: "Replaced" }).waitFor();
    assert.equal(
      (await summaries.first().textContent()).trim(),
      first,
      "an unchanged policy is described at once, as before the import",
    );
    assert.equal(
      (await summaries.nth(1).boundingBox()).height,
      lineHeight,
      "a changed one keeps a line's height until the backend answers",
    );
    await summaries.nth(1).getByText("transient stop; hard stop").waitFor({ timeout: 6000 });
  } finally {
    await app.close();
  }
});

test("after the import dialog or a failed import, focus is back on Import from file… (the file chooser took it)", async () => {
  const focused = (app) => app.page.evaluate(() => document.activeElement?.textContent?.trim());
  const app = await openApp(
    { profiles: [demoProfile()], openPath: "/home/me/demo.json", importPreview: IMPORT_PREVIEW },
    { hash: "#/profiles" },
  );
  try {
    const importButton = app.page.getByRole("button", { name: "Import from file…" });
    // Programmatic clicks focus nothing, like a mouse click in WebKit.
    await importButton.evaluate((b) => b.click());
    const dialog = app.page.getByRole("dialog", { name: "Import “Demo (simulated)”" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).evaluate((b) => b.click());
    await dialog.waitFor({ state: "detached" });
    assert.equal(await focused(app), "Import from file…", "Cancel gives focus back to the button");
  } finally {
    await app.close();
  }
  const failing = await openApp({ profiles: [demoProfile()], openPath: "/home/me/bad.json" }, { hash: "#/profiles" });
  try {
    await failing.page.getByRole("button", { name: "Import from file…" }).evaluate((b) => b.click());
    await failing.page.getByRole("alert").filter({ hasText: "no import preview" }).waitFor();
    assert.equal(
      await focused(failing),
      "Import from file…",
      "a refused file leaves focus on the button, not the page",
    );
  } finally {
    await failing.close();
  }
});

test("a refused import file says the import failed and saved nothing, then each problem on a line of its own", async () => {
  const problems = [
    "Candidate 1 “opus” › Hard › When recovery is used up: “later” is not one of skip, stop",
    "Candidate 1 “opus” › Hard › Retry the same candidate: missing; the document must give it",
  ];
  const app = await openApp(
    {
      profiles: [demoProfile()],
      openPath: "/home/me/bad.json",
      importRefused: {
        message: problems.join("\n"),
        fields: [
          { path: "candidates[0].hard.on_exhausted", message: "unknown variant `later`" },
          { path: "candidates[0].hard", message: "missing field `retry`" },
        ],
      },
    },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByRole("button", { name: "Import from file…" }).click();
    const failed = app.page.getByTestId("import-failed");
    await failed.waitFor();
    assert.equal(await failed.getAttribute("role"), "alert");
    assert.equal((await failed.locator("p").textContent()).trim(), "Import failed; nothing was saved.");
    assert.deepEqual(
      (await failed.locator("li").allTextContents()).map((t) => t.trim()),
      problems,
      "one item a problem; the second's own “;” does not split it",
    );
    assert.ok(!(await app.calls()).some((c) => c.cmd === "import_profile"), "nothing was sent to be saved");
  } finally {
    await app.close();
  }
});

test("an import over unsaved edits of the same profile asks first", async () => {
  const app = await openApp(
    {
      profiles: [demoProfile()],
      openPath: "/home/me/demo.json",
      importPreview: IMPORT_PREVIEW,
      imported: { ...demoProfile(), revision: 2 },
    },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    await app.page.locator("[data-testid=section-transient] input:enabled").first().fill("4");
    await app.page.getByRole("button", { name: "Import from file…" }).click();
    await app.page
      .getByRole("dialog", { name: "Import “Demo (simulated)”" })
      .getByRole("button", { name: "Replace “Demo (simulated)”" })
      .click();
    const ask = app.page.getByRole("dialog", { name: "Save your changes to “Demo (simulated)”?" });
    await ask.waitFor();
    await ask.getByRole("button", { name: "Cancel" }).click();
    assert.ok(!(await app.calls()).some((c) => c.cmd === "import_profile"), "the unsaved edit is kept");
  } finally {
    await app.close();
  }
});

test("a file the backend refuses shows why and opens no preview", async () => {
  const app = await openApp(
    {
      profiles: [demoProfile()],
      openPath: "/home/me/big.json",
      failNext: {
        preview_profile_file: {
          code: "validation",
          message: "file: cannot read /home/me/big.json: larger than 1 MiB; refusing to read it",
          fields: [{ path: "file", message: "cannot read /home/me/big.json: larger than 1 MiB; refusing to read it" }],
        },
      },
    },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByRole("button", { name: "Import from file…" }).click();
    const alert = app.page.getByRole("alert");
    await alert.waitFor();
    assert.match(await alert.textContent(), /larger than 1 MiB; refusing to read it/);
    assert.equal(await app.page.getByRole("dialog").count(), 0);
  } finally {
    await app.close();
  }
});

test("duplicate makes a copy under a free name and selects it", async () => {
  const app = await openApp(
    { profiles: [demoProfile(), { ...demoProfile(), id: 2, name: "Demo (simulated) (copy)" }] },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByRole("button", { name: "Duplicate" }).click();
    await app.page.getByRole("heading", { name: "Demo (simulated) (copy 2)" }).waitFor();
    const dup = (await app.calls()).filter((c) => c.cmd === "duplicate_profile");
    assert.deepEqual(
      dup.map((c) => c.args),
      [{ id: 1, name: "Demo (simulated) (copy 2)" }],
    );
  } finally {
    await app.close();
  }
});

test("a taken name, at create or rename, is refused in a sentence with the name in curly quotes", async () => {
  const app = await openApp(
    { profiles: [demoProfile(), { ...demoProfile(), id: 2, name: "Other" }] },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByLabel("New profile").fill("Demo (simulated)");
    await app.page.getByRole("button", { name: "Create profile" }).click();
    const created = app.page.locator("#new-profile-error");
    await created.waitFor();
    // The backend words it as a fragment (the CLI puts it after `error:`); shown alone, it starts upper-case.
    assert.equal((await created.textContent()).trim(), "A profile named “Demo (simulated)” already exists");

    await app.page.getByRole("button", { name: "Rename" }).click();
    await app.page.getByLabel("New name").fill("Other");
    await app.page.getByRole("button", { name: "Rename" }).click();
    const renamed = app.page.locator("p.field-error[role=alert]");
    await renamed.waitFor();
    assert.equal((await renamed.textContent()).trim(), "A profile named “Other” already exists");
  } finally {
    await app.close();
  }
});

/** Opens the first candidate's transient retry fields. */
async function retryFields(app) {
  await app.page.getByRole("button", { name: "Edit policy" }).first().click();
  const section = app.page.locator("[data-testid=section-transient]");
  return {
    retries: section.getByLabel("Retries", { exact: true }),
    delay: section.getByLabel("First delay", { exact: true }),
    section,
  };
}

test("a fractional retry count is refused at the field and never saved as a rounded value", async () => {
  const app = await open();
  try {
    const { retries } = await retryFields(app);
    await retries.fill("2.5");
    await app.page.getByText("2.5 is not a whole number: whole numbers only").waitFor();
    assert.equal(await retries.inputValue(), "2.5", "the field keeps exactly what was typed");
    assert.equal(await retries.getAttribute("aria-invalid"), "true");
    await app.page.getByRole("button", { name: "Save" }).click();
    // Named with its candidate and section, as the backend names the fields it refuses.
    await app.page
      .getByText(
        /^Not saved: 1 field needs fixing — see the marked fields\. Candidate 1 “[^”]+” › Transient › Retries: 2\.5 is not a whole number/,
      )
      .waitFor();
    assert.equal((await saveCalls(app)).length, 0, "nothing other than what is shown may be written");
    assert.equal(
      await app.page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.id),
      await retries.getAttribute("id"),
      "the refused save takes focus to the field to fix",
    );
  } finally {
    await app.close();
  }
});

test("a negative, cleared or huge number is shown as typed with an error naming it", async () => {
  const app = await open();
  try {
    const { retries } = await retryFields(app);
    await retries.fill("-1");
    assert.equal(await retries.inputValue(), "-1", "no stray 0 in front of the minus");
    await app.page.getByText("-1 is out of range: 1 to 10").waitFor();
    await retries.fill("");
    await app.page.getByText("required: write a whole number").waitFor();
    assert.equal(await retries.inputValue(), "", "a cleared field is not turned into 0");
    await retries.fill("100000000000000000000");
    assert.equal(await retries.inputValue(), "100000000000000000000", "no float rounding of what is shown");
    await app.page.getByText("100000000000000000000 is out of range: 1 to 10").waitFor();
    assert.equal(
      await app.page.getByRole("status").first().textContent(),
      "Unsaved changes",
      "an unreadable field counts as an unsaved edit, so leaving asks",
    );
    await app.page.getByRole("button", { name: "Discard" }).click();
    assert.equal(await retries.inputValue(), "3", "discard shows the saved value again");
    assert.equal(await retries.getAttribute("aria-invalid"), null);
  } finally {
    await app.close();
  }
});

test("policy durations take units, typed or picked, and save exactly the seconds shown", async () => {
  const app = await open();
  try {
    const { delay } = await retryFields(app);
    await delay.fill("300");
    const help = app.page.locator(`[id="${await delay.getAttribute("id")}-help"]`);
    await help.getByText("= 5 min ·", { exact: false }).waitFor();
    await delay.fill("0.25 h");
    await help.getByText("= 15 min ·", { exact: false }).waitFor();
    await delay.fill("5 min");
    await help.getByText("1 s – 1 h", { exact: false }).waitFor();
    assert.ok(!(await help.textContent()).includes("="), "the text says 5 min already: nothing added");
    await app.page.getByLabel("First delay unit").first().selectOption("h");
    assert.deepEqual(
      [await delay.inputValue(), await app.page.getByLabel("First delay unit").first().inputValue()],
      ["5", "h"],
      "picking a unit keeps the number; the unit is said once, in the picker",
    );
    await delay.fill("0.5 s");
    await app.page.getByText("0.5 s is not a whole number of seconds").waitFor();
    await delay.fill("1.5 min");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    const saved = (await saveCalls(app)).at(-1).args.candidates[0].policy.transient.retry;
    assert.equal(saved.initial_interval_seconds, 90, "1.5 min is exactly 90 s");
  } finally {
    await app.close();
  }
});

test("a wait past the limit shows the backend's error, not a rounded equivalent beside it", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    const section = app.page.locator("[data-testid=section-hard]");
    await section.getByRole("switch", { name: "Wait for a trusted provider reset" }).click();
    const wait = section.getByLabel("Longest wait", { exact: true });
    await wait.fill("604800 s");
    await section.getByText("= 7 d ·", { exact: false }).waitFor();
    await wait.fill("604801 s");
    // The fake words it as the backend does (`timing::words::outside`): in durations.
    await section.getByText("must be at most 7 d (7 d 1 s is too long)", { exact: false }).waitFor();
    const help = await section.locator(`#${await wait.getAttribute("aria-describedby")}`).textContent();
    assert.ok(!help.includes("7 d ·") && !help.includes("="), `no "= 7 d" beside the limit error: ${help}`);
  } finally {
    await app.close();
  }
});

test("after a refused save, fixing an agent field clears its error", async () => {
  const profile = demoProfile();
  profile.candidates[1] = candidate(12, "Script", "generic", { transient: immediate("skip"), hard: immediate("skip") });
  const app = await openApp({ profiles: [profile] }, { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    const program = app.page.getByLabel("Program");
    await app.page.getByLabel("Name").nth(0).fill("Script 2");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Not saved:", { exact: false }).waitFor();
    await app.page
      .locator(".field-error", { hasText: "Any command needs a program: write a command on PATH, or its path" })
      .waitFor();
    await program.fill("./run.sh");
    await app.page
      .locator(".field-error", { hasText: "Any command needs a program: write a command on PATH, or its path" })
      .waitFor({ state: "detached" });
    assert.equal(await program.getAttribute("aria-invalid"), null, "the live check answers for the field now");
  } finally {
    await app.close();
  }
});

test("a duplicate name is flagged as typed, refused on save, and its error goes once it is renamed", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    const name = app.page.getByLabel("Name").nth(0);
    await name.fill("Claude (simulated)");
    const duplicate = app.page.locator(".field-error", { hasText: 'duplicate candidate name "Claude (simulated)"' });
    await duplicate.waitFor();
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Not saved:", { exact: false }).waitFor();
    assert.equal(await duplicate.count(), 1, "the save's error and the live one are one message, not two");
    await name.fill("Codex 2");
    await duplicate.waitFor({ state: "detached" });
    assert.equal(await name.getAttribute("aria-invalid"), null, "the live list check answers for the name now");
  } finally {
    await app.close();
  }
});

test("focus lands on the outcome after Save and on the new row after Add", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Move Claude (simulated) down" }).click();
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByTestId("save-message").waitFor();
    assert.equal(
      await app.page.evaluate(() => document.activeElement?.dataset.testid),
      "save-message",
      "Save is disabled once saved; focus goes to what happened, not the page body",
    );
    await app.page.getByRole("button", { name: "+ Add candidate" }).click();
    await app.page.keyboard.type("Gemini");
    await app.page.keyboard.press("Enter");
    const focused = await app.page.evaluate(() => ({
      text: document.activeElement?.textContent?.trim(),
      row: document.activeElement?.closest("[data-testid=candidate-row]")?.querySelector(".name")?.textContent,
    }));
    assert.deepEqual(focused, { text: "Edit policy", row: "Gemini CLI" }, "focus is on the added candidate");
  } finally {
    await app.close();
  }
});

for (const direction of ["up", "down"]) {
  test(`after a move ${direction} the focused button is scrolled into view, clear of the save bar`, async () => {
    const profile = demoProfile();
    for (let i = 0; i < 8; i++)
      profile.candidates.push(candidate(20 + i, `Extra ${i}`, "codex", profile.candidates[1].policy));
    const app = await openApp({ profiles: [profile] }, { hash: "#/profiles", width: 1280, height: 600 });
    try {
      await app.page.getByRole("button", { name: "Move Claude (simulated) down" }).click();
      const label = `Move Extra 3 ${direction}`;
      // Start with the button at the edge it moves towards: just below the
      // top of <main>, or just above the sticky save bar; then move it twice.
      await app.page.getByRole("button", { name: label }).evaluate((b, up) => {
        const main = document.querySelector("main");
        b.scrollIntoView({ block: up ? "start" : "end" });
        const bar = document.querySelector(".savebar").getBoundingClientRect();
        if (!up) main.scrollBy(0, bar.height + 8);
        b.focus({ preventScroll: true });
      }, direction === "up");
      await app.page.keyboard.press("Enter");
      await app.page.keyboard.press("Enter");
      const box = await app.page.evaluate(() => {
        const r = document.activeElement.getBoundingClientRect();
        const main = document.querySelector("main").getBoundingClientRect();
        const bar = document.querySelector(".savebar").getBoundingClientRect();
        const label = document.activeElement.getAttribute("aria-label");
        return { top: r.top, bottom: r.bottom, mainTop: main.top, barTop: bar.top, label };
      });
      assert.equal(box.label, label);
      // In view and not under the sticky save bar, which covers the bottom of <main>.
      assert.ok(box.top >= box.mainTop && box.bottom <= box.barTop, `focused button in view: ${JSON.stringify(box)}`);
    } finally {
      await app.close();
    }
  });
}

for (const [name, viewport] of VIEWPORTS) {
  test(`switching a candidate off moves none of its row's controls (${name})`, async () => {
    // The sixth outside review: on a phone the "disabled" badge appeared above
    // the switch and pushed it 31 px down, under the pointer that had just clicked it.
    const app = await open();
    try {
      await app.page.setViewportSize(viewport);
      const row = app.page.getByTestId("candidate-row").nth(1);
      const enabled = row.getByRole("switch", { name: "Enabled" });
      const remove = row.getByRole("button", { name: /^Remove / });
      await enabled.scrollIntoViewIfNeeded();
      const before = [await at(enabled), await at(remove)];
      await enabled.click();
      await row.getByTestId("disabled-badge").and(row.locator(":not(.hidden)")).waitFor();
      assert.deepEqual([await at(enabled), await at(remove)], before, "the badge had its place already");
    } finally {
      await app.close();
    }
  });
}

test("enable and remove are on the candidate row without opening the policy", async () => {
  const app = await open();
  try {
    const row = app.page.getByTestId("candidate-row").nth(1);
    await row.getByRole("switch", { name: "Enabled" }).click();
    await row.getByText("disabled: never chosen").waitFor();
    await app.page.getByRole("button", { name: "Remove Claude (simulated)" }).click();
    assert.equal(await app.page.getByTestId("candidate-row").count(), 1);
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    const sent = (await saveCalls(app)).at(-1).args.candidates;
    assert.deepEqual(
      sent.map((c) => [c.name, c.enabled]),
      [["Codex", false]],
    );
  } finally {
    await app.close();
  }
});

test("an any-command candidate says its failures go to manual and collapses the policy", async () => {
  const profile = demoProfile();
  profile.candidates[1] = candidate(12, "Script", "generic", { transient: immediate("skip"), hard: immediate("skip") });
  const app = await openApp({ profiles: [profile] }, { hash: "#/profiles" });
  try {
    const row = app.page.getByTestId("candidate-row").nth(1);
    assert.equal(
      (await row.getByTestId("policy-summary").textContent()).trim(),
      "Failures always go to manual recovery (effects of any command are unknown)",
    );
    await row.getByRole("button", { name: "Edit policy" }).click();
    await row.getByTestId("generic-manual").waitFor();
    assert.equal(
      await row.getByTestId("section-transient").isVisible(),
      false,
      "sections that never apply start collapsed",
    );
    await row.getByText("Policy sections (never apply to any command)").click();
    assert.equal(await row.getByTestId("section-transient").isVisible(), true);
  } finally {
    await app.close();
  }
});

/** How far a summary's words start from its left edge: the room its disclosure triangle takes. */
const markerRoom = (summary) =>
  summary.evaluate((s) => {
    const range = document.createRange();
    range.selectNodeContents(s);
    return Math.round(range.getBoundingClientRect().left - s.getBoundingClientRect().left);
  });

test("an any-command candidate's folded policy sections have the disclosure triangle Advanced has", async () => {
  const profile = demoProfile();
  profile.candidates[1] = candidate(12, "Script", "generic", profile.candidates[1].policy);
  const app = await openApp({ profiles: [profile] }, { hash: "#/profiles" });
  try {
    const rows = app.page.getByTestId("candidate-row");
    await rows.nth(0).getByRole("button", { name: "Edit policy" }).click();
    await rows.nth(1).getByRole("button", { name: "Edit policy" }).click();
    const unused = rows.nth(1).locator("summary", { hasText: "Policy sections (never apply to any command)" });
    const advanced = rows.nth(0).getByTestId("advanced-transient").locator("summary");
    const room = await markerRoom(advanced);
    assert.ok(room >= 10, `the case in question: Advanced draws its triangle (${room} px)`);
    assert.equal(
      await markerRoom(unused),
      room,
      "without the triangle it reads as a heading, not as something to open",
    );
  } finally {
    await app.close();
  }
});

test("the save bar stays in view while a long candidate list scrolls", async () => {
  const profile = demoProfile();
  for (let i = 0; i < 10; i++)
    profile.candidates.push(candidate(20 + i, `Extra ${i}`, "codex", profile.candidates[1].policy));
  const app = await openApp({ profiles: [profile] }, { hash: "#/profiles", width: 1280, height: 600 });
  try {
    await app.page.getByRole("button", { name: "Move Claude (simulated) down" }).click();
    const save = app.page.getByRole("button", { name: "Save", exact: true });
    const inView = () =>
      save.evaluate((b) => {
        const r = b.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight;
      });
    assert.equal(await inView(), true, "Save is reachable at the top of a long list");
  } finally {
    await app.close();
  }
});

test("the preview classifies pasted error text with the backend's catalogue and runs the draft on it", async () => {
  const app = await open();
  try {
    await app.page.getByLabel("Example error").selectOption({ label: "Paste an error message…" });
    await app.page.getByText("Paste an error message to see how the catalogue classifies it").waitFor();
    await app.page.getByLabel("From").selectOption("anthropic-api");
    await app.page.getByLabel("Error text").fill("529 overloaded_error");
    const classified = app.page.getByTestId("preview-classified");
    await classified.getByText("[backend] anthropic-api: 529 overloaded_error", { exact: false }).waitFor();
    assert.match(
      await classified.textContent(),
      /Classified as Provider overloaded\s+Transient\s+\(code provider_overloaded, rule fake\.rule\.v1\)/,
    );
    const last = (await app.calls()).filter((c) => c.cmd === "preview_error_text").at(-1);
    assert.deepEqual(
      last.args.candidates.map((c) => c.name),
      ["Claude (simulated)", "Codex"],
      "the unsaved draft is what is previewed",
    );
  } finally {
    await app.close();
  }
});

test("a new agent candidate starts with edit access, full warns, and one saved before levels says it has none", async () => {
  const profile = demoProfile();
  // Codex as a profile saved before access levels holds it: no `access`.
  const app = await openApp({ profiles: [profile] }, { hash: "#/profiles" });
  try {
    const rows = app.page.getByTestId("candidate-row");
    await rows.nth(1).getByRole("button", { name: "Edit policy" }).click();
    const legacy = rows.nth(1).getByTestId("access-legacy");
    await legacy.waitFor();
    assert.match(await legacy.textContent(), /No level is set, so no flag is passed/);

    await app.page.getByRole("button", { name: "+ Add candidate" }).click();
    await app.page.getByLabel("Add a candidate: search agent kinds").fill("claude code");
    await app.page.keyboard.press("Enter");
    const added = rows.nth(2);
    await added.getByRole("button", { name: "Edit policy" }).click();
    const select = added.getByLabel("Access");
    await select.waitFor();
    assert.equal(await select.inputValue(), "edit", "the backend's starter for a new candidate");
    assert.equal(await added.getByTestId("access-full-warning").count(), 0);
    await select.selectOption("full");
    assert.match(await added.getByTestId("access-full-warning").textContent(), /runs any command anywhere/);
    const saved = await (async () => {
      await app.page.getByRole("button", { name: "Save" }).first().click();
      const call = (await app.calls()).findLast((c) => c.cmd === "save_candidates");
      return call.args.candidates[2].agent.access;
    })();
    assert.equal(saved, "full", "the level is saved with the agent");
  } finally {
    await app.close();
  }
});

test("Check says whether a candidate's program and credentials are there", async () => {
  const app = await openApp(
    {
      profiles: [demoProfile()],
      readiness: {
        program: "codex",
        found: null,
        version: null,
        verified: "0.171.0",
        credentials: [{ name: "OPENAI_API_KEY", file: false, present: false }],
        install: "npm install -g @openai/codex@0.171.0",
        problems: ["codex is not found on PATH"],
        ready: false,
      },
    },
    { hash: "#/profiles" },
  );
  try {
    const codex = app.page.getByTestId("candidate-row").nth(1);
    await codex.getByRole("button", { name: "Edit policy" }).click();
    await codex.getByRole("button", { name: "Check" }).click();
    const result = codex.getByTestId("readiness").getByRole("status");
    await result.waitFor();
    assert.equal((await result.textContent()).trim(), "Not ready: one problem", "said in the program's help place");
    // The whole report is one press away, in a dialog: it moves nothing in the row.
    await codex.getByRole("button", { name: "Details" }).click();
    const report = app.page.getByTestId("readiness-report");
    const text = await report.textContent();
    assert.match(text, /not ready/);
    assert.equal(text.match(/not found/g).length, 1, `the missing program is said once: ${text}`);
    assert.match(text, /codex is not found on PATH/);
    assert.match(text, /Credentials: none found/);
    assert.match(text, /Install: npm install -g @openai\/codex@0\.171\.0/);
    await report.getByRole("button", { name: "Close" }).click();
    await report.waitFor({ state: "detached" });
    const call = (await app.calls()).find((c) => c.cmd === "readiness");
    assert.equal(call.args.agent.kind, "codex", "the row's draft is what is checked");
    await codex.getByLabel("Program").fill("/usr/local/bin/codex");
    await result.waitFor({ state: "detached" });
    assert.equal(await codex.getByText("Not ready").count(), 0, "a check of another program is not shown");
  } finally {
    await app.close();
  }
});

/** The bindings' DEFAULT_CONTINUE_MESSAGE, as Rust exported it. */
const DEFAULT_CONTINUE_MESSAGE = JSON.parse(
  /export const DEFAULT_CONTINUE_MESSAGE = (.*) as const;/.exec(
    readFileSync(new URL("../../src/bindings.ts", import.meta.url), "utf8"),
  )[1],
);

test("the transient section's advanced settings turn automatic continuation on with its budget", async () => {
  const app = await open();
  try {
    // The Codex row: its CLI resumes its sessions.
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    const row = app.page.getByTestId("candidate-row").nth(1);
    const transient = row.getByTestId("section-transient");
    assert.equal(await row.getByTestId("advanced-transient").count(), 1, "in the transient section only");
    assert.equal(await row.getByTestId("section-hard").getByText("Advanced").count(), 0, "not in the hard one");
    await transient.getByText("Advanced", { exact: true }).click();
    assert.equal(
      (await transient.getByTestId("auto-continue-why").textContent()).trim(),
      "Continues the agent's own session after a transient failure when every tool it ran completed; never sends the prompt again.",
    );
    const toggle = transient.getByRole("switch", { name: "Continue the agent's session automatically" });
    assert.equal(await toggle.getAttribute("aria-checked"), "false", "off by default");
    await toggle.click();
    const budget = transient.getByLabel("Continuations", { exact: true });
    assert.equal(await budget.inputValue(), "2", "turned on with the kind's starting budget");
    await row.getByText("[backend schedule] no retry, then skip to nobody; continues ≤ 2×").waitFor();
    await budget.fill("6");
    await transient.getByText("must be 1–5 when enabled (6 is too many)").waitFor();
    assert.equal(await budget.getAttribute("aria-invalid"), "true", "refused at its field");
    await budget.fill("3");
    await row.getByText("[backend schedule] no retry, then skip to nobody; continues ≤ 3×").waitFor();
    assert.equal(await transient.locator(".field-error").count(), 0, "fixed, the error goes");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    const saved = (await saveCalls(app)).at(-1).args.candidates[1];
    assert.deepEqual(saved.policy.transient.auto_continue, { enabled: true, max_continuations: 3 });
    assert.equal(saved.policy.hard.auto_continue, undefined, "the hard section is left as it was");
  } finally {
    await app.close();
  }
});

test("a candidate whose kind cannot resume a session is told automatic continuation does not apply", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    const transient = app.page.getByTestId("candidate-row").first().getByTestId("section-transient");
    await transient.getByText("Advanced", { exact: true }).click();
    assert.match(
      await transient.getByTestId("auto-continue-why").textContent(),
      /Simulated provider cannot resume a session, so this does not apply to it\.$/,
    );
    assert.equal(
      await transient.getByRole("switch", { name: "Continue the agent's session automatically" }).count(),
      0,
      "nothing to switch on",
    );
    assert.equal(
      await app.page.getByTestId("continue-message-field").count(),
      0,
      "nor a continuation message to write",
    );
  } finally {
    await app.close();
  }
});

test("the continuation message field shows the default as its placeholder and saves what is typed", async () => {
  const app = await open();
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).nth(1).click();
    const message = app.page.getByLabel("Continuation message (optional)");
    assert.equal(await message.getAttribute("placeholder"), DEFAULT_CONTINUE_MESSAGE);
    assert.equal(await message.inputValue(), "", "none of its own yet: the default is sent");
    await message.fill("Run git status first.\nThen finish the task.");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    let saved = (await saveCalls(app)).at(-1).args.candidates[1];
    assert.equal(saved.agent.continue_message, "Run git status first.\nThen finish the task.", "kept as typed");
    // The saved profile is shown afresh, its rows folded.
    await app.page.getByTestId("candidate-row").nth(1).getByRole("button", { name: "Edit policy" }).click();
    assert.equal(await message.inputValue(), "Run git status first.\nThen finish the task.", "shown as saved");
    await message.fill("  ");
    await app.page.getByRole("button", { name: "Save" }).click();
    for (let i = 0; (await saveCalls(app)).length < 2; i++) {
      assert.ok(i < 200, "the second save is sent");
      await new Promise((done) => setTimeout(done, 25));
    }
    saved = (await saveCalls(app)).at(-1).args.candidates[1];
    assert.equal(saved.agent.continue_message, null, "a blank message is none: the default is sent again");
  } finally {
    await app.close();
  }
});

/** The profile the Profiles area has chosen, as its list marks it and its editor heads it. */
const chosen = async (page) => [
  (await page.locator(".profile[aria-current=true] .pname").textContent()).trim(),
  (await page.locator("#profile-heading").textContent()).trim(),
];

// The thirteenth outside review: the chosen profile went from "Spawn test"
// to "Cmd test" after an import and a window resize. Leaving the area and
// coming back did it in the harness: the area forgot what was chosen.
test("an imported profile stays chosen across window sizes and leaving the area", async () => {
  const spawn = { ...demoProfile(), id: 7, name: "Spawn test" };
  const app = await openApp(
    {
      profiles: [{ ...demoProfile(), name: "Cmd test" }],
      openPath: "/home/me/spawn.json",
      importPreview: { name: "Spawn test", existing: null, document_json: "{}", changes: [] },
      imported: spawn,
    },
    { hash: "#/profiles" },
  );
  try {
    const { page } = app;
    await page.getByRole("button", { name: "Import from file…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Create “Spawn test”" }).click();
    await page.getByTestId("file-note").waitFor();
    // README: an import selects the profile it saved.
    assert.deepEqual(await chosen(page), ["Spawn test", "Spawn test"]);
    for (const [label, viewport] of [...VIEWPORTS, ["between", { width: 700, height: 800 }], ...VIEWPORTS]) {
      await page.setViewportSize(viewport);
      assert.deepEqual(await chosen(page), ["Spawn test", "Spawn test"], `at ${label} width`);
    }
    await page.getByRole("link", { name: "Routes" }).click();
    await page.getByRole("link", { name: "Profiles" }).click();
    await page.locator("#profile-heading").waitFor();
    assert.deepEqual(await chosen(page), ["Spawn test", "Spawn test"], "back in the area, on what was chosen");
  } finally {
    await app.close();
  }
});

test("the profile chosen is in the address, so a reload keeps it", async () => {
  const app = await openApp(
    {
      profiles: [
        { ...demoProfile(), name: "Cmd test" },
        { ...demoProfile(), id: 2, name: "Zed" },
      ],
    },
    { hash: "#/profiles" },
  );
  try {
    const { page } = app;
    await page.getByRole("button", { name: /Zed/ }).click();
    await page.waitForFunction(() => location.hash === "#/profiles/2");
    await page.reload();
    await page.locator("#profile-heading").waitFor();
    assert.deepEqual(await chosen(page), ["Zed", "Zed"]);
  } finally {
    await app.close();
  }
});
