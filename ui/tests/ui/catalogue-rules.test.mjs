// The compact rule browser over the real catalogue, local rules in it, and
// "Create rule from this evidence" (checks shown live, a broad rule refused
// with its reason, a changed fixture confirmed by name before saving).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { openApp, clippedOptions, horizontalOverflow, smallTargets } from "./lib.mjs";

const root = resolve(import.meta.dirname, "../../..");

/** The codes a rule may give, with class and words, as the backend exports them to the UI. */
const RULE_CODES = JSON.parse(
  readFileSync(resolve(root, "ui/src/bindings.ts"), "utf8").match(/RULE_CODES = (\[.*\]) as const/)[1],
);
/** The code → class table. */
const CODE_CLASSES = Object.fromEntries(RULE_CODES.map((c) => [c.code, c.class]));

/** The built-in rules, read from rules.toml as the browser would receive them. */
function realRules() {
  const source = readFileSync(resolve(root, "src/catalogue/rules.toml"), "utf8");
  return source
    .split(/^\[\[rule\]\]$/m)
    .slice(1)
    .map((block) => {
      const one = (key) => block.match(new RegExp(`^${key} = "(.*)"$`, "m"))?.[1];
      const patterns = [...block.matchAll(/^text = (?:'''(.*)'''|'(.*)')$/gm)].map((m) => m[1] ?? m[2]);
      const providers = JSON.parse(block.match(/^providers = (\[.*\])$/m)[1]);
      return {
        id: one("id"),
        description: one("description"),
        priority: Number(block.match(/^priority = (\d+)$/m)[1]),
        providers: providers.includes("any") ? [] : providers,
        code: one("code"),
        class: one("confidence") === "low" ? "unclassified" : (CODE_CLASSES[one("code")] ?? "unclassified"),
        confidence: one("confidence"),
        scope: one("scope"),
        wrapper: one("role") === "wrapper",
        patterns,
        fixtures: [`${providers[0] === "any" ? "generic" : providers[0]}/${one("id")}.toml`],
        origin: { local: false, overrides: null, reviewed: true },
      };
    });
}

const VERSION = readFileSync(resolve(root, "src/catalogue/rules.toml"), "utf8").match(/^version = "(.*)"$/m)[1];
const REAL = { version: VERSION, rules: realRules(), local_path: "/data/catalogue/rules.toml", local_error: null };

/** Height of the page's one scroll owner with every rule listed. */
async function listHeight(app) {
  await app.page.waitForSelector("[data-testid=rule]");
  return app.page.evaluate(() => document.querySelector("main").scrollHeight);
}

// A compact row per rule: about 66 px at 1280 and 126 px at 390 (127 rules).
// Titled by the code's words since issue 30, the row's meta line carries the
// raw code too: at 390 px that is about a line more (it was 109 px).
for (const [width, height, perRule] of [
  [1280, 820, 66],
  [390, 844, 130],
]) {
  const bound = perRule * REAL.rules.length;
  test(`the ${REAL.rules.length} built-in rules fit in under ${perRule} px each at ${width} px wide`, async (t) => {
    const app = await openApp({ rules: REAL }, { width, height, hash: "#/catalogue/rules" });
    try {
      const total = await listHeight(app);
      // The old cards, every pattern always shown, took about 187 px a rule
      // at 1280 and 303 px at 390.
      assert.ok(total < bound, `list is ${total} px tall`);
      t.diagnostic(`rule list at ${width} px: ${total} px`);
      assert.equal(await app.page.locator("[data-testid=rule]").count(), REAL.rules.length, "every rule is listed");
      const o = await horizontalOverflow(app.page);
      const over = o.over.filter((el) => el !== "a.tab");
      assert.ok(o.scrollWidth <= o.width && over.length === 0, `overflow: ${JSON.stringify(o)}`);
      assert.deepEqual(await smallTargets(app.page), []);
    } finally {
      await app.close();
    }
  });
}

const LOCAL_RULES = {
  version: "2026.12.4+local.3",
  local_path: "/data/catalogue/rules.toml",
  local_error: null,
  rules: [
    {
      ...REAL.rules[0],
      id: "local.codex.gizmo_jammed.v1",
      description: "codex reports: the gizmo service jammed",
      code: "provider_unavailable",
      class: "transient",
      confidence: "medium",
      scope: "provider",
      patterns: ["the gizmo service jammed"],
      fixtures: ["local/local-codex-gizmo_jammed-v1-1.toml"],
      origin: { local: true, overrides: null, reviewed: false },
    },
    {
      ...REAL.rules.find((r) => r.id === "anthropic.overloaded.v1"),
      origin: { local: true, overrides: "anthropic.overloaded.v1", reviewed: true },
    },
  ],
};

test("local rules are marked local, as an override, and as not reviewed", async () => {
  const app = await openApp({ rules: LOCAL_RULES }, { hash: "#/catalogue/rules" });
  try {
    await app.page.waitForSelector("[data-testid=rule]");
    assert.equal(await app.page.getByTestId("catalogue-version").textContent(), "2026.12.4+local.3");
    const mine = await app.page
      .locator("[data-rule-id='local.codex.gizmo_jammed.v1'] [data-testid=rule-meta]")
      .textContent();
    assert.match(mine, /Local/);
    assert.match(mine, /Not reviewed/, "an unreviewed rule says so in the compact row");
    const override = await app.page
      .locator("[data-rule-id='anthropic.overloaded.v1'] [data-testid=rule-meta]")
      .textContent();
    assert.match(override, /Overrides anthropic\.overloaded\.v1/);
    assert.doesNotMatch(override, /Not reviewed/);
    await app.page.locator("[data-rule-id='local.codex.gizmo_jammed.v1'] summary").click();
    assert.match(
      await app.page.getByTestId("rule-details").textContent(),
      /until it is\s+reviewed\s+the failure is treated as unclassified/,
    );
  } finally {
    await app.close();
  }
});

test("a local rule can be removed after confirming, and the list reloads", async () => {
  const rules = structuredClone(LOCAL_RULES);
  rules.rules.push(REAL.rules.find((r) => r.id === "claude_code.usage_limit_epoch.v1"));
  const app = await openApp({ rules }, { hash: "#/catalogue/rules" });
  try {
    const row = app.page.locator("[data-rule-id='local.codex.gizmo_jammed.v1']");
    await row.locator("summary").click();
    await row.getByRole("button", { name: "Remove local rule…" }).click();
    const dialog = app.page.getByRole("dialog", { name: "Remove local rule?" });
    assert.match(
      await dialog.textContent(),
      /local\.codex\.gizmo_jammed\.v1 and the local fixtures that expect it are deleted from \/data\/catalogue\/rules\.toml/,
    );
    await dialog.getByRole("button", { name: "Remove" }).click();
    await app.page.getByTestId("rule-removal").waitFor();
    assert.equal(
      (await app.page.getByTestId("rule-removal").textContent()).trim(),
      "Removed local rule local.codex.gizmo_jammed.v1 and its local fixtures; catalogue 2026.12.4+local.9.",
    );
    await app.page.waitForFunction(() => !document.querySelector("[data-rule-id='local.codex.gizmo_jammed.v1']"));
    assert.equal(await app.page.getByTestId("catalogue-version").textContent(), "2026.12.4+local.9");
    const sent = (await app.calls()).filter((c) => c.cmd === "remove_local_rule").map((c) => c.args);
    assert.deepEqual(sent, [{ id: "local.codex.gizmo_jammed.v1" }]);
    const builtin = app.page.locator("[data-rule-id='claude_code.usage_limit_epoch.v1']");
    await builtin.locator("summary").click();
    await builtin.getByTestId("rule-details").waitFor();
    assert.equal(
      await builtin.getByRole("button", { name: "Remove local rule…" }).count(),
      0,
      "a built-in rule offers no removal",
    );
  } finally {
    await app.close();
  }
});

test("a removal the backend refuses says why", async () => {
  const app = await openApp(
    {
      rules: structuredClone(LOCAL_RULES),
      failNext: {
        remove_local_rule: {
          code: "conflict",
          message: "local catalogue /data/catalogue/rules.toml is not used: bad; fix or remove that file first",
          fields: [],
        },
      },
    },
    { hash: "#/catalogue/rules" },
  );
  try {
    const row = app.page.locator("[data-rule-id='local.codex.gizmo_jammed.v1']");
    await row.locator("summary").click();
    await row.getByRole("button", { name: "Remove local rule…" }).click();
    await app.page.getByRole("dialog", { name: "Remove local rule?" }).getByRole("button", { name: "Remove" }).click();
    await app.page.getByTestId("rule-removal").waitFor();
    assert.match(
      await app.page.getByTestId("rule-removal").textContent(),
      /Could not remove local\.codex\.gizmo_jammed\.v1: local catalogue \/data\/catalogue\/rules\.toml is not used: bad; fix or remove that file first/,
    );
  } finally {
    await app.close();
  }
});

test("a broken local rules file is named, with the rule and why", async () => {
  const error =
    "local catalogue /data/catalogue/rules.toml is not used: rule local.a.rule.v1: priority 5000 is outside 0-1000";
  const app = await openApp({ rules: { ...REAL, local_error: error } }, { hash: "#/catalogue/rules" });
  try {
    const notice = app.page.getByTestId("local-error");
    await notice.waitFor();
    assert.equal(await notice.textContent(), `Your local rules are not used, the built-in catalogue is: ${error}`);
  } finally {
    await app.close();
  }
});

const EVIDENCE = {
  provider: "codex",
  message: "the gizmo service jammed (unit 42) for key [redacted:api_key]",
  truncated: false,
  phase: "exit",
  http_status: null,
  headers: {},
  error_type: null,
  exit_code: 1,
  occurred_at: "2026-12-02T15:00:00Z",
  correlation: null,
};

const INBOX = [
  {
    route_id: 7,
    attempt: 2,
    candidate_name: "Codex",
    code: "unknown",
    catalogue_version: "2026.12.4",
    evidence: EVIDENCE,
  },
];

const DRAFT = {
  id: "local.codex.gizmo_service_jammed.v1",
  description: "codex reports: the gizmo service jammed (unit 42)",
  providers: ["codex"],
  code: "provider_unavailable",
  priority: 78,
  pattern: String.raw`the gizmo service jammed \(unit \d+\)`,
  overrides: null,
};

const verdict = (code, cls, rule_id) => ({ code, class: cls, rule_id, reset_at: null });

const CLEAN = {
  rule_id: DRAFT.id,
  checks: {
    impact: [
      {
        name: "From the inbox — route 7, attempt 2",
        before: verdict("unknown", "unclassified", null),
        after: verdict("provider_unavailable", "transient", DRAFT.id),
      },
    ],
    samples_checked: 12,
    changed_fixtures: [],
    fixtures_checked: 342,
    broadness: [],
  },
  refusals: [],
};

const BROAD_REASON =
  "the pattern of alternative 1 has only 5 characters of fixed text; at least 8, so it cannot match ordinary output by chance";
const BROAD = {
  rule_id: DRAFT.id,
  checks: { ...CLEAN.checks, impact: [], broadness: [BROAD_REASON] },
  refusals: [{ path: "pattern", message: BROAD_REASON }],
};

const CHANGED = {
  rule_id: DRAFT.id,
  checks: {
    ...CLEAN.checks,
    changed_fixtures: [
      {
        name: "codex/stream_error_503.toml",
        before: verdict("provider_unavailable", "transient", "codex.stream_error.v1"),
        after: verdict("provider_unavailable", "transient", DRAFT.id),
      },
    ],
  },
  refusals: [],
};

function scenario(reviews = []) {
  return {
    rules: structuredClone({ ...REAL, rules: REAL.rules.slice(0, 3) }),
    inbox: INBOX,
    proposal: { draft: DRAFT, sanitized: EVIDENCE.message, code_basis: "it says unavailable" },
    reviews: [{ pattern: DRAFT.pattern, review: CLEAN }, ...reviews],
  };
}

async function openDialog(app) {
  await app.page.getByTestId("inbox-item").getByRole("button", { name: "Create rule…" }).click();
  const dialog = app.page.getByTestId("create-rule");
  await dialog.getByTestId("check-impact").waitFor();
  return dialog;
}

test("create rule from an inbox item: proposal, live checks, save, and the rule list shows it", async () => {
  const app = await openApp(scenario(), { hash: "#/catalogue/inbox" });
  try {
    const facts = (await app.page.locator(".facts").first().textContent()).replace(/\s+/g, " ");
    assert.match(facts, /Provider Codex CLI /, `the inbox names the provider in words: ${facts}`);
    const dialog = await openDialog(app);
    const providers = await dialog.locator("#rule-provider option").allTextContents();
    assert.ok(providers.includes("Codex CLI"), `the rule's provider choices read in words: ${providers}`);
    assert.equal(await dialog.getByTestId("rule-evidence").textContent(), EVIDENCE.message, "the sanitized text");
    assert.equal(await dialog.getByLabel(/Text pattern/).inputValue(), DRAFT.pattern);
    assert.equal(await dialog.getByLabel("Code").inputValue(), "provider_unavailable");
    assert.match(
      await dialog.getByTestId("rule-class").textContent(),
      /^“Provider unavailable” is class Transient: the class comes from the code, a rule never sets it\. Proposed because it says unavailable\.$/,
      "a space between the two sentences",
    );
    assert.equal(
      (await dialog.getByTestId("check-impact").textContent()).replace(/\s+/g, " ").trim(),
      "What it changes 1 of 12 inbox items and past attempts change: From the inbox — route 7, attempt 2: Not recognised (Unclassified) → Provider unavailable (Transient) unknown, no rule → provider_unavailable, rule local.codex.gizmo_service_jammed.v1",
      "each verdict in the code's words first, its code and rule as small detail after",
    );
    assert.equal(
      await dialog.getByTestId("check-impact").locator(".detail").textContent(),
      "unknown, no rule → provider_unavailable, rule local.codex.gizmo_service_jammed.v1",
    );
    assert.match(await dialog.getByTestId("check-fixtures").textContent(), /All 342 fixtures keep their result/);
    assert.match(await dialog.getByTestId("check-broadness").textContent(), /Bounded, and matches none/);
    const proposed = (await app.calls()).find((c) => c.cmd === "propose_rule").args;
    assert.deepEqual(proposed, { source: { inbox: { route_id: 7, attempt: 2 } } });

    await dialog.getByLabel("Priority (0–1000)").fill("80");
    await app.page.waitForFunction(() =>
      window.__CALLS__.some((c) => c.cmd === "review_rule" && c.args.draft.priority === 80),
    );
    await dialog.getByRole("button", { name: "Save rule" }).click();
    const notice = app.page.getByTestId("rule-saved");
    await notice.waitFor();
    assert.match(
      await notice.textContent(),
      /^Saved your local rule: it decides the next failure it matches\./,
      "words first, not the rule id and the file",
    );
    assert.equal(
      (await notice.getByTestId("rule-saved-detail").textContent()).replace(/\s+/g, " "),
      `local.codex.gizmo_service_jammed.v1 in /tmp/catalogue/rules.toml, catalogue ${VERSION}+local.1`,
      "where it went, as small detail",
    );
    const saved = (await app.calls()).find((c) => c.cmd === "save_rule").args;
    assert.deepEqual(saved, {
      draft: { ...DRAFT, priority: 80 },
      confirmed: [],
      source: { inbox: { route_id: 7, attempt: 2 } },
    });
    assert.equal(await app.page.getByTestId("create-rule").count(), 0, "the dialog closes");
    await app.page.getByRole("tab", { name: "Rules" }).click();
    const row = app.page.locator(`[data-rule-id='${DRAFT.id}']`);
    await row.waitFor();
    assert.match(await row.textContent(), /Local/, "the rule list reloads with the new local rule");
    assert.equal(await app.page.getByTestId("catalogue-version").textContent(), `${VERSION}+local.1`);
  } finally {
    await app.close();
  }
});

test("an inbox item says when the catalogue now decides it, and whether that acts", async () => {
  const now = (cls, code) => ({ code, class: cls, rule_id: DRAFT.id, catalogue_version: "2026.12.4+local.1" });
  const app = await openApp(
    {
      inbox: [
        { ...INBOX[0], now: now("transient", "provider_unavailable") },
        { ...INBOX[0], attempt: 3, now: now("unclassified", "provider_unavailable") },
        { ...INBOX[0], attempt: 4, now: null },
      ],
    },
    { hash: "#/catalogue/inbox" },
  );
  try {
    await app.page.getByTestId("inbox-item").first().waitFor();
    const notes = await app.page.getByTestId("inbox-now").allTextContents();
    assert.equal(notes.length, 2, "an item no rule matches yet has no note");
    assert.match(
      notes[0].replace(/\s+/g, " "),
      /now classifies this as Provider unavailable \(Transient\): the next occurrence is handled by the candidate's policy\. \(provider_unavailable, rule local\.codex\.gizmo_service_jammed\.v1, catalogue 2026\.12\.4\+local\.1\)/,
      "the code's words; code, rule and catalogue after them as small detail",
    );
    assert.match(
      notes[1].replace(/\s+/g, " "),
      /A rule now matches this as Provider unavailable, but it does not act on it .*the next occurrence still needs you\. \(provider_unavailable, rule local\./,
    );
  } finally {
    await app.close();
  }
});

test("a too broad pattern is refused with its reason and cannot be saved", async () => {
  const app = await openApp(scenario([{ pattern: String.raw`gizmo\w+`, review: BROAD }]), {
    hash: "#/catalogue/inbox",
  });
  try {
    const dialog = await openDialog(app);
    await dialog.getByLabel(/Text pattern/).fill(String.raw`gizmo\w+`);
    const error = dialog.locator("#rule-pattern-error");
    await error.waitFor();
    assert.equal(
      await error.textContent(),
      `T${BROAD_REASON.slice(1)}`,
      "the reason is at the pattern field, as a sentence",
    );
    assert.match(await dialog.getByTestId("check-broadness").textContent(), /only 5 characters of fixed text/);
    assert.ok(await dialog.getByRole("button", { name: "Save rule" }).isDisabled(), "a refused rule cannot be saved");
    assert.match(await dialog.getByTestId("save-blocked").textContent(), /Not saved yet: one problem above/);
    assert.equal((await app.calls()).filter((c) => c.cmd === "save_rule").length, 0);
  } finally {
    await app.close();
  }
});

test("a changed fixture must be confirmed by name before the rule saves", async () => {
  const app = await openApp(scenario([{ pattern: "the gizmo service jammed", review: CHANGED }]), {
    hash: "#/catalogue/inbox",
  });
  try {
    const dialog = await openDialog(app);
    await dialog.getByLabel(/Text pattern/).fill("the gizmo service jammed");
    const fixtures = dialog.getByTestId("check-fixtures");
    await fixtures.getByText("codex/stream_error_503.toml").waitFor();
    assert.match(
      await fixtures.textContent(),
      /1 of 342 fixtures change\. Saving needs each one confirmed:.*Provider unavailable \(Transient\) → Provider unavailable \(Transient\)\s+provider_unavailable, rule codex\.stream_error\.v1 → provider_unavailable, rule local\.codex\.gizmo_service_jammed\.v1/,
    );
    const save = dialog.getByRole("button", { name: "Save rule" });
    assert.ok(await save.isDisabled(), "not saved while a change is unconfirmed");
    await fixtures.getByRole("checkbox", { name: /Accept codex\/stream_error_503\.toml/ }).check();
    await app.page.waitForFunction(() =>
      window.__CALLS__.some((c) => c.cmd === "review_rule" && c.args.confirmed.includes("codex/stream_error_503.toml")),
    );
    await save.waitFor({ state: "visible" });
    await app.page.waitForFunction(
      () => !document.querySelector("[data-testid=create-rule] button[type=submit]").disabled,
    );
    await save.click();
    await app.page.getByTestId("rule-saved").waitFor();
    const sent = (await app.calls()).find((c) => c.cmd === "save_rule").args;
    assert.deepEqual(sent.confirmed, ["codex/stream_error_503.toml"], "the confirmation is sent by name");
  } finally {
    await app.close();
  }
});

/** Pasted text no rule knows, as the playground classifies it. */
const PASTED = "the gizmo service jammed (unit 42)";
const PASTED_RESULT = {
  sanitized: PASTED,
  explanation: {
    classification: {
      code: "unknown",
      class: "unclassified",
      confidence: "low",
      scope: "unknown",
      rule_id: null,
      catalogue_version: "2026.12.4",
      retry_after_s: null,
      reset_at: null,
      matched: null,
      explanation: "No catalogue rule matched this evidence; unknown failures are not recovered automatically.",
    },
    matches: [],
    progress_lines_ignored: 0,
    hint: null,
  },
};

async function ruleFromPasted(app) {
  await app.page.getByLabel("Failure text").fill(PASTED);
  await app.page.getByRole("button", { name: "Classify" }).click();
  await app.page.getByRole("button", { name: "Create rule from this text…" }).click();
  const dialog = app.page.getByTestId("create-rule");
  await dialog.getByTestId("check-impact").waitFor();
  return dialog;
}

test("a rule can be made from text pasted in the playground", async () => {
  const app = await openApp({ ...scenario(), playground: PASTED_RESULT }, { hash: "#/catalogue/playground" });
  try {
    await ruleFromPasted(app);
    const proposed = (await app.calls()).find((c) => c.cmd === "propose_rule").args;
    assert.deepEqual(proposed, {
      source: { pasted: { provider: "generic", message: PASTED, http_status: null, headers: {} } },
    });
    await app.page.keyboard.press("Escape");
    assert.equal(await app.page.getByTestId("create-rule").count(), 0, "Escape closes without saving");
    assert.equal(
      await app.page.evaluate(() => document.activeElement?.textContent),
      "Create rule from this text…",
      "focus returns to the button that opened it",
    );
  } finally {
    await app.close();
  }
});

test("closing Create rule returns focus to its button though the click did not focus it (WebKit)", async () => {
  const app = await openApp({ ...scenario(), playground: PASTED_RESULT }, { hash: "#/catalogue/playground" });
  try {
    await app.page.getByLabel("Failure text").fill(PASTED);
    await app.page.getByRole("button", { name: "Classify" }).click();
    const opener = app.page.getByRole("button", { name: "Create rule from this text…" });
    // A programmatic click focuses nothing, like a mouse click on a WebKit button.
    await opener.evaluate((b) => b.click());
    await app.page.getByTestId("create-rule").getByTestId("check-impact").waitFor();
    await app.page.keyboard.press("Escape");
    assert.equal(await app.page.getByTestId("create-rule").count(), 0);
    assert.equal(
      await app.page.evaluate(() => document.activeElement?.textContent),
      "Create rule from this text…",
      "focus returns to the pressed button, not the page body",
    );
  } finally {
    await app.close();
  }
});

test("a pattern that misses the pasted text it is made from is refused at the field before Save", async () => {
  const misses = "warp core breach imminent";
  // The backend's words when the draft would not classify its own text (engine::overlay).
  const reason = "the rule does not match the text it is made from";
  const review = {
    rule_id: DRAFT.id,
    checks: { ...CLEAN.checks, impact: [] },
    refusals: [{ path: "pattern", message: reason }],
  };
  const app = await openApp(
    { ...scenario([{ pattern: misses, review }]), playground: PASTED_RESULT },
    { hash: "#/catalogue/playground" },
  );
  try {
    const dialog = await ruleFromPasted(app);
    await dialog.getByLabel(/Text pattern/).fill(misses);
    const error = dialog.locator("#rule-pattern-error");
    await error.waitFor();
    assert.equal(
      await error.textContent(),
      "The rule does not match the text it is made from",
      "said at the pattern field while typing, as a sentence",
    );
    assert.ok(await dialog.getByRole("button", { name: "Save rule" }).isDisabled(), "Save is not offered");
    const checked = (await app.calls()).filter((c) => c.cmd === "review_rule").at(-1).args;
    assert.equal(checked.draft.pattern, misses);
    assert.deepEqual(
      checked.source,
      { pasted: { provider: "generic", message: PASTED, http_status: null, headers: {} } },
      "the live check is given the text, so the backend can say the pattern misses it",
    );
    assert.equal((await app.calls()).filter((c) => c.cmd === "save_rule").length, 0, "nothing was saved");
  } finally {
    await app.close();
  }
});

for (const width of [1280, 390]) {
  test(`a refusal of the whole rule takes its kept lines: the checks below stay (${width} px)`, async () => {
    const broken = "gizmo service (jammed|stuck)";
    // The backend's words when the local rules file is broken (engine::overlay), with its long path.
    const reason =
      "local rules file /home/someone/.local/share/recourse/catalogue/rules.local.toml: TOML parse error at line 12, column 3: expected `=`; fix or remove that file first";
    const review = { rule_id: DRAFT.id, checks: CLEAN.checks, refusals: [{ path: "rule", message: reason }] };
    const app = await openApp(scenario([{ pattern: broken, review }]), {
      width,
      height: 844,
      hash: "#/catalogue/inbox",
    });
    try {
      const dialog = await openDialog(app);
      const checks = dialog.getByTestId("rule-checks");
      const where = async () => {
        const [c, d] = [await checks.boundingBox(), await dialog.locator("form").boundingBox()];
        return Math.round(c.y - d.y);
      };
      const before = await where();
      await dialog.getByLabel(/Text pattern/).fill(broken);
      const error = dialog.locator("#rule-whole-error");
      await error.waitFor();
      assert.equal(await error.textContent(), `L${reason.slice(1)}`, "standing alone, it starts as a sentence");
      assert.equal(await where(), before, "the refusal had its place: Checks stays where it was");
      const cell = dialog.getByTestId("rule-whole-words");
      const hidden = await cell.evaluate((e) => e.scrollHeight - e.clientHeight);
      if (hidden > 0)
        assert.equal(await cell.getAttribute("tabindex"), "0", "longer than its lines, it scrolls, by keyboard too");
      await dialog.getByLabel(/Text pattern/).fill(DRAFT.pattern);
      await error.waitFor({ state: "detached" });
      assert.equal(await where(), before, "and it goes without moving anything either");
    } finally {
      await app.close();
    }
  });
}

test("a priority typed wrong is said in its help's place: the fields below stay", async () => {
  const app = await openApp(scenario(), { hash: "#/catalogue/inbox" });
  try {
    const dialog = await openDialog(app);
    const below = dialog.getByLabel("Description");
    const before = await below.boundingBox();
    await dialog.getByLabel("Priority (0–1000)").fill("lots");
    await dialog.getByText("Priority must be a whole number from 0 to 1000.").waitFor();
    assert.deepEqual(await below.boundingBox(), before, "the error had its place: the next row stays");
    await dialog.getByLabel("Priority (0–1000)").fill("80");
    await dialog.getByText("Priority must be a whole number from 0 to 1000.").waitFor({ state: "detached" });
  } finally {
    await app.close();
  }
});

test("the code picker offers each failure in words under its class, and keeps the code as the value", async () => {
  for (const width of [1280, 390]) {
    const app = await openApp(scenario(), { width, height: 844, hash: "#/catalogue/inbox" });
    try {
      const dialog = await openDialog(app);
      const code = dialog.getByLabel("Code");
      const groups = await code.evaluate((el) =>
        [...el.querySelectorAll("optgroup")].map((g) => ({
          label: g.label,
          options: [...g.querySelectorAll("option")].map((o) => [o.value, o.text]),
        })),
      );
      assert.deepEqual(
        groups.map((g) => g.label),
        ["Transient", "Hard", "Unclassified"],
      );
      const offered = groups.flatMap((g) => g.options.map(([value, text]) => ({ value, text, group: g.label })));
      assert.deepEqual(
        offered.map((o) => o.value).sort(),
        RULE_CODES.map((c) => c.code).sort(),
        "every code a rule may give, once",
      );
      for (const o of offered) {
        assert.ok(!o.text.includes("_"), `${o.value} is offered in words, not as “${o.text}”`);
        assert.equal(o.group.toLowerCase(), CODE_CLASSES[o.value], `${o.value} sits under its own class`);
      }
      assert.equal(
        offered.find((o) => o.value === "usage_limit_reached").text,
        RULE_CODES.find((c) => c.code === "usage_limit_reached").words,
        "the backend's words for the code",
      );
      const fit = await clippedOptions(code);
      assert.deepEqual(fit.cut, [], `at ${width} px each choice fits the ${fit.room} px of the closed picker`);
      await code.selectOption({ label: "Usage limit reached" });
      assert.equal(await code.inputValue(), "usage_limit_reached", "the stored value is still the code");
      // The thirteenth outside review: this line read "code `rate_limited`".
      const said = await dialog.getByTestId("rule-class").textContent();
      assert.match(said, /^“Usage limit reached” is class Hard:/, "the code's words, with its class");
      assert.doesNotMatch(said, /usage_limit_reached/, "not the engine's name for it");
    } finally {
      await app.close();
    }
  }
});

test("the create-rule dialog at 390×844: no sideways overflow, 44 px targets", async () => {
  const app = await openApp(scenario(), { width: 390, height: 844, hash: "#/catalogue/inbox" });
  try {
    await openDialog(app);
    const o = await horizontalOverflow(app.page);
    const over = o.over.filter((el) => el !== "a.tab");
    assert.ok(o.scrollWidth <= o.width && over.length === 0, `overflow: ${JSON.stringify(o)}`);
    assert.deepEqual(await smallTargets(app.page), []);
  } finally {
    await app.close();
  }
});

test("the pattern's live refusal has its place already, and the code's refusal takes its help's place", async () => {
  const misses = "warp core breach imminent";
  const noCode = "boom: bad thing";
  const choose = "choose which failure this is: its code's class decides what policies do with it";
  const app = await openApp(
    scenario([
      {
        pattern: misses,
        review: {
          rule_id: DRAFT.id,
          checks: { ...CLEAN.checks, impact: [] },
          refusals: [{ path: "pattern", message: "the rule does not match the text it is made from" }],
        },
      },
      { pattern: noCode, review: { rule_id: DRAFT.id, checks: null, refusals: [{ path: "code", message: choose }] } },
    ]),
    { hash: "#/catalogue/inbox" },
  );
  try {
    const dialog = await openDialog(app);
    const code = dialog.getByLabel("Code");
    const box = async () => {
      const [c, d] = [await code.boundingBox(), await dialog.boundingBox()];
      return { x: Math.round(c.x - d.x), y: Math.round(c.y - d.y) };
    };
    const before = await box();
    await dialog.getByLabel(/Text pattern/).fill(misses);
    await dialog.locator("#rule-pattern-error").waitFor();
    assert.deepEqual(await box(), before, "the live message had its place: the Code row stays");

    await dialog.getByLabel(/Text pattern/).fill(noCode);
    await dialog.locator("#rule-code-error").waitFor();
    assert.equal(
      await dialog.locator("#rule-code-error").textContent(),
      "Choose which failure this is: its code's class decides what policies do with it",
      "standing alone, the backend's refusal starts as a sentence",
    );
    assert.equal(
      await dialog.getByTestId("rule-class").isVisible(),
      false,
      "the refusal says what the help says: one of them shows, in one place",
    );
    assert.deepEqual(await box(), before, "and nothing moved");
  } finally {
    await app.close();
  }
});

test("a pattern another rule already decides says which rule wins, not that the pattern misses", async () => {
  const again = "the gizmo service jammed";
  // The backend's words when the new rule matches but a saved local rule wins (engine::overlay::own_text).
  const reason =
    "rule “codex reports: the gizmo service jammed” (local.codex.gizmo_jammed.v1) already matches this text at the same priority (78), and it comes first, so this rule would never decide it: give this rule a priority above 78, or remove or change that local rule";
  const review = { rule_id: DRAFT.id, checks: CLEAN.checks, refusals: [{ path: "pattern", message: reason }] };
  const app = await openApp(scenario([{ pattern: again, review }]), { hash: "#/catalogue/inbox" });
  try {
    const dialog = await openDialog(app);
    await dialog.getByLabel(/Text pattern/).fill(again);
    const error = dialog.locator("#rule-pattern-error");
    await error.waitFor();
    assert.equal(await error.textContent(), `R${reason.slice(1)}`, "the winning rule named, as a sentence");
    assert.ok(await dialog.getByRole("button", { name: "Save rule" }).isDisabled());
  } finally {
    await app.close();
  }
});

test("an invalid pattern is said in words on one line at the field: the Code row stays", async () => {
  const broken = "two (words";
  // The backend's words for a regex that does not parse (engine::overlay::regex_words).
  const reason = "pattern is not a valid regular expression: unclosed group ( at “two (words”";
  const review = { rule_id: DRAFT.id, checks: null, refusals: [{ path: "pattern", message: reason }] };
  for (const width of [1280, 390]) {
    const app = await openApp(scenario([{ pattern: broken, review }]), {
      width,
      height: 844,
      hash: "#/catalogue/inbox",
    });
    try {
      const dialog = await openDialog(app);
      const code = dialog.getByLabel("Code");
      const before = await code.boundingBox();
      await dialog.getByLabel(/Text pattern/).fill(broken);
      const error = dialog.locator("#rule-pattern-error");
      await error.waitFor();
      assert.equal(
        await error.textContent(),
        "Pattern is not a valid regular expression: unclosed group ( at “two (words”",
      );
      assert.deepEqual(await code.boundingBox(), before, `at ${width} px the refusal had its place`);
    } finally {
      await app.close();
    }
  }
});

test("choosing a code clears its refusal, and the checks say they wait for a valid priority", async () => {
  const choose = "choose which failure this is: its code's class decides what policies do with it";
  const app = await openApp(
    {
      ...scenario(),
      proposal: { draft: { ...DRAFT, code: "unknown" }, sanitized: EVIDENCE.message, code_basis: null },
      reviews: [
        {
          pattern: DRAFT.pattern,
          review: { rule_id: DRAFT.id, checks: null, refusals: [{ path: "code", message: choose }] },
        },
      ],
    },
    { hash: "#/catalogue/inbox" },
  );
  try {
    await app.page.getByTestId("inbox-item").getByRole("button", { name: "Create rule…" }).click();
    const dialog = app.page.getByTestId("create-rule");
    const error = dialog.locator("#rule-code-error");
    await error.waitFor();
    await dialog.getByLabel("Priority (0–1000)").fill("lots");
    const heading = dialog.getByTestId("rule-checks").locator("h3");
    await dialog.getByText("Checks (waiting for a valid priority)").waitFor();
    await dialog.getByLabel("Code").selectOption({ label: "Usage limit reached" });
    await error.waitFor({ state: "detached" });
    assert.equal(
      (await heading.textContent()).trim(),
      "Checks (waiting for a valid priority)",
      "not stuck at “checking…”: it says why the checks wait",
    );
    assert.ok(await dialog.getByRole("button", { name: "Save rule" }).isDisabled(), "still not saved: no priority");
  } finally {
    await app.close();
  }
});

for (const width of [1280, 390]) {
  test(`choosing a code, and refusals at Rule id, Description and Replaces, move nothing (${width} px)`, async () => {
    const refused = "the gizmo jammed again";
    const review = {
      rule_id: DRAFT.id,
      checks: CLEAN.checks,
      refusals: [
        { path: "id", message: 'rule id "Local.X" is not of the form area.name.vN (lowercase, digits, _)' },
        { path: "description", message: "rule local.x.y.v1: description is empty" },
        { path: "overrides", message: "rule local.x.y.v1 overrides nosuch.rule.v1, which is not a built-in rule" },
      ],
    };
    const app = await openApp(
      {
        ...scenario([{ pattern: refused, review }]),
        proposal: { draft: { ...DRAFT, code: "unknown" }, sanitized: EVIDENCE.message, code_basis: null },
      },
      { width, height: 844, hash: "#/catalogue/inbox" },
    );
    try {
      await app.page.getByTestId("inbox-item").getByRole("button", { name: "Create rule…" }).click();
      const dialog = app.page.getByTestId("create-rule");
      await dialog.getByTestId("check-impact").waitFor();
      const controls = ["Priority (0–1000)", "Rule id", "Description", /Replaces built-in rule/];
      const where = async () => {
        const form = await dialog.locator("form").boundingBox();
        const boxes = [];
        for (const label of [...controls, "Checks"]) {
          const el = label === "Checks" ? dialog.getByTestId("rule-checks") : dialog.getByLabel(label);
          const b = await el.boundingBox();
          boxes.push(b.y - form.y);
        }
        return boxes;
      };
      // Sub-pixel text metrics may shift a row by a hundredth of a pixel: nothing a pointer notices.
      const stays = async (before, why) => {
        const now = await where();
        assert.ok(
          now.every((y, i) => Math.abs(y - before[i]) < 0.5),
          `${why}: ${JSON.stringify(before)} → ${JSON.stringify(now)}`,
        );
      };
      const before = await where();
      await dialog.getByLabel("Code").selectOption({ label: "Usage limit reached" });
      await dialog.getByTestId("rule-class").getByText("Usage limit reached", { exact: false }).waitFor();
      await stays(before, "the code's help kept room for its longest words");
      await dialog.getByLabel(/Text pattern/).fill(refused);
      for (const id of ["rule-id", "rule-description", "rule-overrides"])
        await dialog.locator(`#${id}-error`).waitFor();
      assert.equal(
        await dialog.locator("#rule-id-error").textContent(),
        'Rule id "Local.X" is not of the form area.name.vN (lowercase, digits, _)',
      );
      await stays(before, "each refusal took its help's place");
      for (const [id, help] of [
        ["rule-id", "Like local.area.name.v1: lower-case words, digits and _, a version last."],
        ["rule-description", "Shown in the rule list and with each failure the rule classifies."],
        [
          "rule-overrides",
          "Empty: the rule adds to the built-in ones. A built-in rule's id: this rule takes its place.",
        ],
      ])
        assert.equal(await dialog.locator(`#${id}-help`).textContent(), help);
    } finally {
      await app.close();
    }
  });
}
