// The profile editor, catalogue, dialogs and Settings as issue 30 (an
// outside review) asks: arguments that are never split, controls that do not
// move, no schedule for invalid fields, errors where they belong, import as a
// copy, Cancel in the close question, dark drop-downs, a playground that
// reflects a saved rule, a rule code that is asked for, and the settings a
// person expects.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { candidate, demoProfile, immediate, previewStep } from "./fixtures.mjs";

const withCommand = () => ({
  ...demoProfile(),
  candidates: [candidate(11, "Script", "generic", { transient: immediate("skip"), hard: immediate("skip") })].map(
    (c) => ({ ...c, agent: { ...c.agent, program: "sh" } }),
  ),
});

test("extra arguments are one row each, spaces and quotes kept, and saved as that list", async () => {
  const app = await openApp({ profiles: [withCommand()] }, { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).click();
    const args = app.page.getByTestId("args-editor");
    await args.getByRole("button", { name: "Add argument" }).click();
    await args.getByLabel("Argument 1", { exact: true }).fill("-c");
    await args.getByRole("button", { name: "Add argument" }).click();
    await args.getByLabel("Argument 2", { exact: true }).fill("echo 'a b'; exit 1");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    const saved = (await app.calls()).filter((c) => c.cmd === "save_candidates").at(-1).args.candidates[0];
    assert.deepEqual(saved.agent.args, ["-c", "echo 'a b'; exit 1"], "two arguments, not five pieces");
  } finally {
    await app.close();
  }
});

/** Opens the first candidate's policy: its row, transient section and retry switch. */
async function openTransient(page) {
  const row = page.getByTestId("candidate-row").first();
  await row.getByRole("button", { name: "Edit policy" }).click();
  const section = row.getByTestId("section-transient");
  return { row, section, retry: section.getByRole("switch", { name: "Retry the same candidate" }) };
}

test("switching a wait on or a field going invalid moves nothing under the pointer, and no schedule is described then", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  try {
    const { row, section, retry } = await openTransient(app.page);
    // Boxes relative to the row: a click or fill may scroll the page, which moves nothing under the pointer.
    const within = async (locator) => {
      const [box, origin] = [await locator.boundingBox(), await row.boundingBox()];
      return { x: box.x - origin.x, y: box.y - origin.y, width: box.width, height: box.height };
    };
    const before = await within(retry);
    const head = await within(row.locator(".head"));
    await section.getByRole("switch", { name: "Wait for a trusted provider reset" }).click();
    await section.getByLabel("Longest wait", { exact: true }).waitFor();
    assert.deepEqual(await within(retry), before, "the retry switch stays where it was");
    await section.getByLabel("Retries", { exact: true }).fill("0");
    await app.page.waitForFunction(
      () => !document.querySelector("[data-testid=needs-fixing]").classList.contains("hidden"),
    );
    assert.deepEqual(await within(row.locator(".head")), head, "the badge had its place already");
    assert.equal(
      (await section.getByTestId("schedule-transient").textContent()).trim(),
      "Fix the fields marked above to see what this section does.",
      "no schedule for 0 retries, which cannot be saved",
    );
  } finally {
    await app.close();
  }
});

test("text a field cannot read leaves no schedule described, as a refused value does", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  try {
    const { row, section, retry } = await openTransient(app.page);
    if ((await retry.getAttribute("aria-checked")) !== "true") await retry.click();
    await section.getByLabel("First delay", { exact: true }).fill("-5");
    await app.page.waitForFunction(
      () =>
        document.querySelector("[data-testid=schedule-transient]")?.textContent?.trim() ===
        "Fix the fields marked above to see what this section does.",
      undefined,
      { timeout: 5000 },
    );
    assert.equal(
      (await row.getByTestId("policy-summary").textContent()).trim(),
      "Fix the fields marked below to see what this policy does.",
      "the row's one-line summary does not describe the older value either",
    );
    assert.equal(
      (await app.page.getByTestId("preview-unread").textContent()).trim(),
      "Fix the fields marked above to see what this draft would do.",
      "the preview does not simulate the older value either",
    );
    assert.equal(await app.page.getByTestId("preview-timeline").count(), 0);
    const name = (await row.locator(".name").textContent()).trim();
    await app.page.getByRole("button", { name: "Save", exact: true }).click();
    const said = await app.page.getByText("Not saved:", { exact: false }).first().textContent();
    assert.ok(
      said.startsWith(
        `Not saved: 1 field needs fixing — see the marked fields. Candidate 1 “${name}” › Transient › First delay: `,
      ),
      `the refusal names the candidate and section, as the backend's do: ${said}`,
    );
  } finally {
    await app.close();
  }
});

test("a value the backend refuses (out of range, readable) leaves the preview and the row summary describing nothing", async () => {
  const app = await openApp(
    { profiles: [demoProfile()], preview: [previewStep("transient retry 1 of 3 in 2 h")] },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByTestId("preview-timeline").waitFor();
    const { row, section, retry } = await openTransient(app.page);
    if ((await retry.getAttribute("aria-checked")) !== "true") await retry.click();
    // "2 h" reads as 7200 s: the field takes it, the validator refuses it (at most 1 h).
    await section.getByLabel("First delay", { exact: true }).fill("2 h");
    await app.page.getByTestId("preview-unread").waitFor({ timeout: 5000 });
    assert.equal(
      (await app.page.getByTestId("preview-unread").textContent()).trim(),
      "Fix the fields marked above to see what this draft would do.",
    );
    assert.equal(
      await app.page.getByTestId("preview-timeline").count(),
      0,
      "no schedule of a value that cannot be saved",
    );
    assert.equal(
      (await row.getByTestId("policy-summary").textContent()).trim(),
      "Fix the fields marked below to see what this policy does.",
      "the row's summary describes nothing either",
    );
    await section.getByLabel("First delay", { exact: true }).fill("5 s");
    await app.page.getByTestId("preview-timeline").waitFor({ timeout: 5000 });
    assert.match(
      await row.getByTestId("policy-summary").textContent(),
      /\[backend summary\]/,
      "fixed, both describe the draft again",
    );
  } finally {
    await app.close();
  }
});

for (const [label, viewport] of [
  ["desktop", { width: 1280, height: 820 }],
  ["phone", { width: 390, height: 844 }],
]) {
  test(`opening and closing a policy section keeps the page where it was (${label})`, async () => {
    const app = await openApp({ profiles: [demoProfile()] }, { ...viewport, hash: "#/profiles" });
    try {
      const row = app.page.getByTestId("candidate-row").nth(1);
      const toggle = row.getByRole("button", { name: "Edit policy" });
      const remove = row.getByRole("button", { name: /^Remove / });
      await toggle.scrollIntoViewIfNeeded();
      // Viewport boxes: where the controls are under the pointer, whatever scrolled.
      const at = async (locator) => {
        const { x, y, width } = await locator.boundingBox();
        return { x: Math.round(x), y: Math.round(y), width: Math.round(width) };
      };
      const [toggleBefore, removeBefore] = [await at(toggle), await at(remove)];
      await toggle.click();
      await row.getByTestId("section-transient").waitFor();
      const collapse = row.getByRole("button", { name: "Collapse" });
      assert.deepEqual(await at(collapse), toggleBefore, "the button just pressed stays under the pointer");
      assert.deepEqual(await at(remove), removeBefore, "the row's other controls stay put");
      await collapse.click();
      await row.getByTestId("section-transient").waitFor({ state: "detached" });
      assert.deepEqual(await at(toggle), toggleBefore, "closing it moves nothing either");
    } finally {
      await app.close();
    }
  });
}

test("a simulated candidate chooses whose words it fails in", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/profiles" });
  try {
    await app.page.getByRole("button", { name: "Edit policy" }).first().click();
    await app.page.getByLabel("Fails like").selectOption("codex");
    await app.page.getByRole("button", { name: "Save" }).click();
    await app.page.getByText("Saved. Changes apply", { exact: false }).first().waitFor();
    const saved = (await app.calls()).filter((c) => c.cmd === "save_candidates").at(-1).args.candidates[0];
    assert.equal(saved.agent.simulates, "codex");
  } finally {
    await app.close();
  }
});

test("a refused import is said apart from the New profile field, and goes with the next action", async () => {
  const app = await openApp(
    {
      profiles: [demoProfile()],
      openPath: "/home/me/bad.json",
      failNext: {
        preview_profile_file: {
          code: "validation",
          message: "file: cannot read /home/me/bad.json: not UTF-8 text",
          fields: [{ path: "file", message: "cannot read /home/me/bad.json: not UTF-8 text" }],
        },
      },
    },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByRole("button", { name: "Import from file…" }).click();
    await app.page.getByText("cannot read /home/me/bad.json", { exact: false }).waitFor();
    assert.equal(
      await app.page.getByLabel("New profile").getAttribute("aria-invalid"),
      null,
      "the New profile field has nothing to do with it",
    );
    await app.page.getByRole("button", { name: "Create profile" }).click();
    await app.page.getByText("Give the new profile a name.").waitFor();
    assert.equal(await app.page.getByText("cannot read /home/me/bad.json", { exact: false }).count(), 0);
    assert.equal(await app.page.getByLabel("New profile").getAttribute("aria-invalid"), "true");
  } finally {
    await app.close();
  }
});

test("a file whose profile exists can be imported as a copy beside it", async () => {
  const app = await openApp(
    {
      profiles: [demoProfile()],
      openPath: "/home/me/demo.json",
      importPreview: {
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
        ],
      },
      imported: demoProfile(),
    },
    { hash: "#/profiles" },
  );
  try {
    await app.page.getByRole("button", { name: "Import from file…" }).click();
    assert.equal(
      (await app.page.getByTestId("change-what").textContent()).trim(),
      "Transient › Retries",
      "the change is named as the editor labels the field, not by its path in the file",
    );
    await app.page.getByTestId("import-copy").click();
    await app.page.getByTestId("file-note").filter({ hasText: "Imported a copy" }).waitFor();
    const sent = (await app.calls()).filter((c) => c.cmd === "import_profile").map((c) => c.args);
    assert.deepEqual(sent, [{ documentJson: '{"version": 1}', replace: null, copyAs: "Demo (simulated) (copy)" }]);
    assert.equal(await app.page.locator("#profile-heading").textContent(), "Demo (simulated) (copy)");
    assert.equal(
      await app.page.locator(".profiles button").count(),
      2,
      "the profile of the file's name is still there",
    );
  } finally {
    await app.close();
  }
});

test("the close question has a visible Cancel that keeps the window and answers nothing", async () => {
  const app = await openApp({});
  try {
    await app.emit("close-requested", {
      counts: { needs_you: 0, active: 1, running: 0, waiting: 1, stopped: 0, finished: 0, archived: 0, all: 1 },
      quit_warning: "1 route is waiting.",
      unsaved: null,
      then: null,
    });
    const dialog = app.page.getByTestId("close-dialog");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(await app.page.evaluate(() => window.__BACKEND__.closeAnswers), []);
  } finally {
    await app.close();
  }
});

// The fifth outside review: after Cancel, focus landed on Start run.
const CLOSE_QUESTION = {
  counts: { needs_you: 0, active: 1, running: 0, waiting: 1, stopped: 0, finished: 0, archived: 0, all: 1 },
  quit_warning: "1 route is waiting.",
  unsaved: null,
  then: null,
};
for (const [where, focus] of [
  ["the route search", (page) => page.getByLabel("Search routes").focus()],
  ["nothing (the window's close button)", (page) => page.evaluate(() => document.activeElement?.blur())],
])
  test(`Cancel in the close question gives focus back where it was: ${where}`, async () => {
    const app = await openApp({});
    try {
      await focus(app.page);
      const before = await app.page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
      await app.emit("close-requested", CLOSE_QUESTION);
      const dialog = app.page.getByTestId("close-dialog");
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "detached" });
      await app.page.waitForTimeout(50);
      assert.equal(
        await app.page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName),
        before,
        "focus is where it was before the question, not on Start run",
      );
    } finally {
      await app.close();
    }
  });

test("choosing Dark themes the window itself, so native drop-downs open dark", async () => {
  const app = await openApp({}, { hash: "#/settings" });
  try {
    await app.page.getByRole("radio", { name: "Dark" }).click();
    await app.page.waitForFunction(() =>
      window.__CALLS__.some((c) => c.cmd === "plugin:window|set_theme" && c.args.value === "dark"),
    );
    await app.page.getByRole("radio", { name: "Light" }).click();
    await app.page.waitForFunction(() =>
      window.__CALLS__.some((c) => c.cmd === "plugin:window|set_theme" && c.args.value === "light"),
    );
  } finally {
    await app.close();
  }
});

const unknownResult = (code, cls, rule) => ({
  sanitized: "the gizmo jammed (unit 42)",
  explanation: {
    classification: {
      code,
      class: cls,
      confidence: rule ? "medium" : "low",
      scope: "unknown",
      rule_id: rule,
      catalogue_version: rule ? "2026.12.5+local.1" : "2026.12.5",
      retry_after_s: null,
      reset_at: null,
      matched: null,
      explanation: rule ? `matched ${rule}` : "No catalogue rule matched this evidence.",
    },
    matches: [],
    progress_lines_ignored: 0,
    hint: null,
  },
});

test("after a rule is saved the playground shows what the catalogue says now, without pressing Classify", async () => {
  const draft = {
    id: "local.generic.gizmo.v1",
    description: "generic reports: the gizmo jammed",
    providers: ["generic"],
    code: "unknown",
    priority: 78,
    pattern: String.raw`the gizmo jammed \(unit \d+\)`,
    overrides: null,
  };
  const app = await openApp(
    {
      rules: { version: "2026.12.5", rules: [], local_path: "/tmp/rules.toml", local_error: null },
      proposal: { draft, sanitized: "the gizmo jammed (unit 42)", code_basis: null },
      playground: unknownResult("unknown", "unclassified", null),
      playgroundAfterSave: unknownResult("provider_unavailable", "transient", "local.generic.gizmo.v1"),
    },
    { hash: "#/catalogue/playground" },
  );
  try {
    await app.page.getByLabel("Failure text").fill("the gizmo jammed (unit 42)");
    await app.page.getByRole("button", { name: "Classify" }).click();
    await app.page.getByRole("button", { name: "Create rule from this text…" }).click();
    const dialog = app.page.getByTestId("create-rule");
    const code = dialog.getByLabel("Code");
    await code.waitFor();
    assert.equal(await code.inputValue(), "unknown", "nothing in the text says which failure: no guess");
    assert.match(await dialog.getByTestId("rule-class").textContent(), /choose its code/);
    assert.equal(await dialog.getByRole("button", { name: "Save rule" }).isDisabled(), true);
    await code.selectOption("provider_unavailable");
    await dialog.getByTestId("check-impact").waitFor();
    const review = (await app.calls()).filter((c) => c.cmd === "review_rule").at(-1).args;
    assert.deepEqual(
      review.source,
      { pasted: { provider: "generic", message: "the gizmo jammed (unit 42)", http_status: null, headers: {} } },
      "the live check knows the text, so a pattern that misses it is said before Save",
    );
    await dialog.getByRole("button", { name: "Save rule" }).click();
    await dialog.waitFor({ state: "detached" });
    await app.page.getByText("local.generic.gizmo.v1", { exact: false }).first().waitFor();
    const classified = (await app.calls()).filter((c) => c.cmd === "classify_text").length;
    assert.equal(classified, 2, "classified again by itself after the save");
  } finally {
    await app.close();
  }
});

test("Settings keep the run defaults, notifications and retention, and open the folders Recourse uses", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/settings" });
  try {
    await app.page.getByLabel("Default profile").selectOption("1");
    await app.page.getByRole("switch", { name: "A route succeeded" }).click();
    await app.page.getByLabel("Delete routes after").fill("30");
    await app.page.getByLabel("Delete routes after").press("Tab");
    await app.page.waitForFunction(() => window.__BACKEND__.settings.retention.routes_days === 30);
    await app.page.getByLabel("Remove attempt details after").fill("40");
    await app.page.getByLabel("Remove attempt details after").press("Tab");
    await app.page.getByText("details go first: at most the 30 days routes are kept (40 is too many)").waitFor();
    const settings = await app.page.evaluate(() => window.__BACKEND__.settings);
    assert.equal(settings.default_profile, 1);
    assert.deepEqual(settings.notify, { needs_you: true, succeeded: true, waiting: false });
    assert.deepEqual(settings.retention, { details_days: null, routes_days: 30 }, "the refused value was not saved");
    assert.equal(await app.page.getByTestId("db-path").textContent(), "/tmp/test.db");
    await app.page.getByRole("button", { name: "Open folder" }).first().click();
    await app.page.waitForFunction(() =>
      window.__CALLS__.some((c) => c.cmd === "open_folder" && c.args.folder === "database"),
    );
  } finally {
    await app.close();
  }
});

test("commands in Settings and the agent picker read as code, never with literal backticks", async () => {
  const app = await openApp({ profiles: [demoProfile()] }, { hash: "#/settings" });
  try {
    const limit = app.page.getByText("Obeyed by every process on this database", { exact: false });
    await limit.waitFor();
    assert.ok(!(await limit.textContent()).includes("`"), await limit.textContent());
    assert.equal(await limit.locator("code").first().textContent(), "recourse run");
    await app.page.goto(app.page.url().replace("#/settings", "#/profiles"));
    await app.page.getByRole("button", { name: "+ Add candidate" }).click();
    const picker = app.page.getByRole("group", { name: "Add a candidate" });
    await picker.locator(".option").first().waitFor();
    const said = await picker.locator(".options").textContent();
    assert.ok(
      !said.includes("`"),
      `the kinds' descriptions mark commands with backticks; shown, they are code: ${said}`,
    );
    assert.ok((await picker.locator(".options code").count()) > 0, "the marked commands are code");
  } finally {
    await app.close();
  }
});

test("a created profile takes its place in the alphabetical list at once, whatever its case", async () => {
  const app = await openApp({ profiles: [{ ...demoProfile(), name: "Night batch" }] }, { hash: "#/profiles" });
  try {
    const names = () => app.page.locator(".profiles .pname").allTextContents();
    await app.page.getByLabel("New profile").fill("alpha");
    await app.page.getByRole("button", { name: "Create profile" }).click();
    await app.page.locator(".pname", { hasText: "alpha" }).waitFor();
    await app.page.getByLabel("New profile").fill("Zeta");
    await app.page.getByRole("button", { name: "Create profile" }).click();
    await app.page.locator(".pname", { hasText: "Zeta" }).waitFor();
    assert.deepEqual(
      await names(),
      ["alpha", "Night batch", "Zeta"],
      "the order the list has after a reload, not the order of creation",
    );
  } finally {
    await app.close();
  }
});
