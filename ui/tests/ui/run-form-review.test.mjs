// The run form after an outside review in a real window (new user): the
// readiness note beside Start run was cut off mid-sentence in its fixed
// lines, a profile made with the CLI was missing from the drop-down until
// Profiles was visited, and the "may repeat work" warning pushed Start run
// down. Settings' "None" default promised something the form did not do.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VIEWPORTS, at, openApp } from "./lib.mjs";
import { NOW, candidate, demoProfile, immediate, routeSnapshot } from "./fixtures.mjs";

const SKIP = { transient: immediate("skip"), hard: immediate("skip") };

/** A candidate of `kind` that starts `program`. */
function runs(id, name, kind, program) {
  const c = candidate(id, name, kind, SKIP);
  return { ...c, agent: { ...c.agent, program } };
}

const profile = (id, name, candidates) => ({ id, name, revision: 1, created_at: NOW, updated_at: NOW, candidates });

/** The backend's real words for a Claude Code candidate with no key (src/runner/readiness.rs). */
const NO_KEY =
  "no credentials found: set one of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN or log in with Claude Code";
const UNREADY = {
  program: "claude",
  found: "/usr/bin/claude",
  version: "2.1.332",
  verified: "2.1.332",
  credentials: [{ name: "ANTHROPIC_API_KEY", present: false, file: false }],
  install: null,
  problems: ["claude is not found on PATH", NO_KEY],
  ready: false,
};
const READY = { ...UNREADY, program: "", found: null, credentials: [], problems: [], ready: true };

const PROFILES = [
  profile(1, "Demo", [runs(11, "opus", "claude_code", "claude")]),
  profile(2, "Mixed", [
    runs(21, "opus", "claude_code", "claude"),
    runs(22, "sonnet", "claude_code", "claude"),
    runs(23, "Sim", "simulated", null),
  ]),
  profile(3, "Offline", [runs(31, "Sim", "simulated", null)]),
];
const SCENARIO = { profiles: PROFILES, readinessOf: { claude: UNREADY, simulated: READY } };

/** Pixels of the element's text cut off at its foot (0: all of it shows). */
const clipped = (locator) => locator.evaluate((e) => e.scrollHeight - e.clientHeight);

for (const [label, viewport] of VIEWPORTS) {
  test(`the note beside Start run is one whole sentence, with every reason one Why… away, and nothing moves (${label})`, async () => {
    const app = await openApp(SCENARIO, viewport);
    try {
      const unfold = app.page.getByTestId("unfold-start");
      if (await unfold.isVisible()) await unfold.click();
      const form = app.page.getByTestId("start-run");
      const choose = form.getByLabel("Profile");
      const note = form.getByTestId("run-readiness");
      const cell = form.getByTestId("run-start-words");
      const why = form.getByTestId("run-why");
      const start = form.getByRole("button", { name: "Start run" });
      const where = () => Promise.all([start, form.getByLabel("Prompt"), cell, why].map(at));
      await choose.selectOption({ label: "Offline · 1 enabled" });
      await app.page.waitForTimeout(300);
      const before = await where();

      await choose.selectOption({ label: "Demo · 1 enabled" });
      await note.getByText("No candidate can start now; Start run still tries.").waitFor();
      // The sentence ends on what matters: the whole of it shows in its lines.
      assert.equal(await clipped(cell), 0, "the whole sentence fits the lines beside Start run");
      assert.equal(await cell.getAttribute("tabindex"), null, "nothing to scroll: no inner scrollbar");
      assert.deepEqual(await where(), before, "the note and Why… move neither Start run, the prompt nor themselves");
      await app.page.screenshot({ path: `/tmp/form14-run-note-${label}.png`, fullPage: false });

      await why.click();
      const dialog = app.page.getByTestId("run-why-dialog");
      await dialog.waitFor();
      const text = await dialog.textContent();
      assert.ok(text.includes("opus — claude is not found on PATH; " + NO_KEY), "each candidate with its whole reason");
      await dialog.getByRole("button", { name: "Close" }).click();
      await dialog.waitFor({ state: "detached" });
      assert.equal(
        await app.page.evaluate(() => document.activeElement?.dataset.testid),
        "run-why",
        "focus is back on Why…",
      );

      await choose.selectOption({ label: "Mixed · 3 enabled" });
      await note.getByText("2 of 3 candidates can't start now.").waitFor();
      assert.equal(await clipped(cell), 0, "the count fits too");
      assert.ok(!(await note.evaluate((e) => e.classList.contains("warning"))), "one can start: a quiet note");
      await why.click();
      assert.equal(await app.page.getByTestId("run-why-unready").locator("li").count(), 2, "both are listed");
      await app.page.keyboard.press("Escape");
      await app.page.getByTestId("run-why-dialog").waitFor({ state: "detached" });

      await choose.selectOption({ label: "Offline · 1 enabled" });
      await app.page.waitForFunction(() => document.querySelector("[data-testid=run-readiness]")?.textContent === "");
      assert.ok(!(await why.isVisible()), "nothing to explain: Why… is hidden, its room kept");
      assert.deepEqual(await where(), before, "nothing moved as the note came and went");
    } finally {
      await app.close();
    }
  });

  test(`run again's "may repeat work" takes the note's place and moves nothing (${label})`, async () => {
    const app = await openApp(
      {
        profiles: [demoProfile()],
        routes: [
          {
            snapshot: routeSnapshot(7, "needs_manual", {
              repeat_risk: "the safety gate held it: a tool ran (Bash) before the stream dropped",
              actions: ["retry_now", "stop"],
            }),
            attempts: [],
            prompt: "Migrate the users table",
            profile_id: 1,
          },
        ],
      },
      viewport,
    );
    try {
      const unfold = app.page.getByTestId("unfold-start");
      if (await unfold.isVisible()) await unfold.click();
      const form = app.page.getByTestId("start-run");
      await app.page.waitForFunction(() => document.querySelector("#run-profile")?.value === "1");
      const start = form.getByRole("button", { name: "Start run" });
      const row = app.page.locator('[data-route="7"]');
      // Run again… scrolls the form into view: where things are is measured from the form's top.
      const offsets = async () => {
        const [f, s, r] = await Promise.all([form, start, row].map(at));
        return { start: s.y - f.y, list: r.y - f.y };
      };
      const before = await offsets();
      await app.page.locator('[data-route="7"]').click();
      await app.page.getByTestId("run-again").click();
      await form.getByTestId("run-again-risk").waitFor();
      assert.equal(
        (await form.getByTestId("run-again-risk").textContent()).trim(),
        "Route 7 may repeat work; Start run asks first.",
      );
      assert.equal(await clipped(form.getByTestId("run-start-words")), 0, "the whole sentence shows");
      if (label === "desktop") {
        assert.deepEqual(await offsets(), before, "neither Start run nor the route list below moved");
      }
      await form.getByTestId("run-why").click();
      assert.match(
        await app.page.getByTestId("run-why-dialog").textContent(),
        /Route 7 may repeat work: the safety gate held it: a tool ran \(Bash\) before the stream dropped\./,
        "the whole risk is one Why… away",
      );
    } finally {
      await app.close();
    }
  });
}

test("a profile made elsewhere shows in the run form when the window regains focus, and the choice stays", async () => {
  const app = await openApp(SCENARIO);
  try {
    const choose = app.page.getByTestId("start-run").getByLabel("Profile");
    await choose.selectOption({ label: "Mixed · 3 enabled" });
    // Made with the CLI while the window was in the background.
    await app.page.evaluate(() => {
      const b = window.__BACKEND__;
      b.profiles.push({ ...structuredClone(b.profiles[2]), id: 9, name: "From CLI" });
    });
    await app.page.evaluate(() => window.dispatchEvent(new Event("focus")));
    await choose.locator("option", { hasText: "From CLI" }).waitFor({ state: "attached" });
    assert.equal(await choose.inputValue(), "2", "the chosen profile is kept");
  } finally {
    await app.close();
  }
});

test("Settings' None default says what the run form does: the only profile is chosen, else none", async () => {
  const one = await openApp({ profiles: [demoProfile()] }, { hash: "#/settings" });
  try {
    await one.page.getByLabel("Default profile").locator("option", { hasText: "None" }).waitFor({ state: "attached" });
    assert.equal(
      await one.page.getByLabel("Default profile").locator("option").first().textContent(),
      "None: the only profile, or choose each time",
    );
    await one.page.goto(one.page.url().replace("#/settings", "#/routes"));
    await one.page.waitForFunction(() => document.querySelector("#run-profile")?.value === "1");
  } finally {
    await one.close();
  }
  const two = await openApp({ profiles: PROFILES });
  try {
    await two.page.waitForTimeout(500);
    assert.equal(await two.page.locator("#run-profile").inputValue(), "", "several and no default: none chosen");
  } finally {
    await two.close();
  }
});
