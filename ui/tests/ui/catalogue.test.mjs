// Catalogue area: rule browser, playground and inbox of unclassified evidence.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp, horizontalOverflow, smallTargets, scrollOwners } from "./lib.mjs";

const LONG_PATTERN = String.raw`Request was aborted|Request cancelled\.|\[Request interrupted by user[^\]]*\]|Interrupted by user|Interrupted · What should Claude do instead|\bAbortError\b|The operation was aborted|\bSIGINT\b|cancelled_by_the_user_without_any_spaces_in_this_very_long_alternative_token`;

const BUILTIN = { local: false, overrides: null, reviewed: true };

const RULES = {
  version: "2026.12.1",
  rules: [
    {
      id: "anthropic.overloaded.v1",
      description: "Anthropic API overloaded_error (HTTP 529)",
      priority: 80,
      providers: [],
      code: "provider_overloaded",
      class: "transient",
      confidence: "high",
      scope: "provider",
      wrapper: false,
      patterns: [String.raw`\btype\W{1,8}overloaded_error\b`],
      fixtures: ["anthropic-api/overloaded.toml"],
      origin: BUILTIN,
    },
    {
      id: "claude_code.usage_limit.v1",
      description: "Claude Code reports that the subscription usage window is used up",
      priority: 90,
      providers: ["claude-code"],
      code: "usage_limit_reached",
      class: "hard",
      confidence: "high",
      scope: "account",
      wrapper: false,
      patterns: [String.raw`(?i)\bClaude (?:AI )?usage limit reached`],
      fixtures: [],
      origin: BUILTIN,
    },
    {
      id: "runtime.cancelled.v1",
      description: "the run was cancelled or interrupted by the user",
      priority: 95,
      providers: [],
      code: "cancelled",
      class: "unclassified",
      confidence: "high",
      scope: "out_of_scope",
      wrapper: false,
      patterns: [LONG_PATTERN],
      fixtures: [],
      origin: BUILTIN,
    },
    {
      id: "codex.usage_limit.v1",
      description: "Codex reports that the ChatGPT plan usage limit is reached",
      priority: 92,
      providers: ["codex", "openai-api"],
      code: "usage_limit_reached",
      class: "hard",
      confidence: "high",
      scope: "account",
      wrapper: false,
      patterns: [],
      fixtures: [],
      origin: BUILTIN,
    },
    {
      id: "wrapper.retry_limit.v1",
      description: "an exceeded retry limit around some other cause",
      priority: 30,
      providers: [],
      code: "provider_unavailable",
      class: "transient",
      confidence: "medium",
      scope: "provider",
      wrapper: true,
      patterns: [String.raw`exceeded retry limit`],
      fixtures: ["codex/retry_limit_wraps_401.toml"],
      origin: BUILTIN,
    },
  ],
  local_path: "/home/u/.local/share/recourse/catalogue/rules.toml",
  local_error: null,
};

const bytes = (s) => Buffer.byteLength(s, "utf8");

/** A playground answer whose matched span is `needle` inside `sanitized`. */
function playground(sanitized, needle, extra = {}) {
  const at = sanitized.indexOf(needle);
  const span = { start: bytes(sanitized.slice(0, at)), end: bytes(sanitized.slice(0, at + needle.length)) };
  return {
    sanitized,
    explanation: {
      classification: {
        code: "provider_overloaded",
        class: "transient",
        confidence: "high",
        scope: "provider",
        rule_id: "anthropic.overloaded.v1",
        catalogue_version: "2026.12.1",
        retry_after_s: 30,
        reset_at: "2026-12-02T17:00:30Z",
        matched: span,
        explanation: `Anthropic API overloaded_error (HTTP 529): the service is temporarily overloaded. The text "${needle}" matched; “Provider overloaded” is transient.`,
      },
      matches: [
        {
          rule_id: "anthropic.overloaded.v1",
          priority: 80,
          code: "provider_overloaded",
          class: "transient",
          structured: false,
          span,
          outcome: "selected",
        },
        {
          rule_id: "wrapper.retry_limit.v1",
          priority: 30,
          code: "provider_unavailable",
          class: "transient",
          structured: false,
          span: null,
          outcome: "wrapped",
        },
        {
          rule_id: "http.status_529.v1",
          priority: 20,
          code: "provider_overloaded",
          class: "transient",
          structured: true,
          span: null,
          outcome: "outranked",
        },
      ],
      progress_lines_ignored: 2,
      hint: { reset_at: "2026-12-02T17:00:30Z", retry_after_s: 30, source: "retry_after_header", span: null },
      ...extra,
    },
  };
}

const INBOX = [
  {
    route_id: 7,
    attempt: 2,
    candidate_name: "Claude Code",
    code: "unknown",
    catalogue_version: "2026.12.1",
    evidence: {
      provider: "claude-code",
      message: "Error: the flux capacitor refused token [redacted:api_key] at /home/[redacted:user]/project",
      truncated: false,
      phase: "exit",
      http_status: null,
      headers: {},
      error_type: null,
      exit_code: 1,
      occurred_at: "2026-12-02T15:00:00Z",
      correlation: null,
    },
  },
];

async function openTab(app, name) {
  await app.page.getByRole("tab", { name }).click();
}

/** Fields are looked up inside one tab panel: hidden panels stay mounted and reuse labels. */
const panel = (app, name) => app.page.getByRole("tabpanel", { name });

test("searching and filtering the rules narrows the list", async () => {
  const app = await openApp({ rules: RULES }, { hash: "#/catalogue" });
  try {
    const ids = () =>
      app.page.locator("[data-testid=rule]:visible").evaluateAll((els) => els.map((e) => e.dataset.ruleId));
    await app.page.waitForSelector("[data-testid=rule]");
    assert.equal(await app.page.getByTestId("catalogue-version").textContent(), "2026.12.1");
    assert.equal((await ids()).length, 5);

    await app.page.getByLabel("Search rules").fill("usage_limit");
    assert.deepEqual(await ids(), ["claude_code.usage_limit.v1", "codex.usage_limit.v1"], "search covers the code");
    await app.page.getByLabel("Search rules").fill("interrupted");
    assert.deepEqual(await ids(), ["runtime.cancelled.v1"], "search covers the description");

    await app.page.getByRole("button", { name: "Clear filters" }).click();
    await app.page.getByLabel("Class", { exact: true }).selectOption("hard");
    assert.deepEqual(await ids(), ["claude_code.usage_limit.v1", "codex.usage_limit.v1"]);

    await app.page.getByLabel("Class", { exact: true }).selectOption("all");
    await panel(app, "Rules").getByLabel("Provider", { exact: true }).selectOption("codex");
    assert.deepEqual(
      await ids(),
      ["anthropic.overloaded.v1", "runtime.cancelled.v1", "codex.usage_limit.v1", "wrapper.retry_limit.v1"],
      "a provider filter keeps rules for any provider and drops rules scoped to other tools",
    );

    await app.page.getByLabel("Search rules").fill("no such rule anywhere");
    assert.match(await app.page.getByTestId("rule-count").textContent(), /Showing 0 of 5/);
    assert.ok(await app.page.getByText("No rule matches these filters").isVisible(), "an empty result explains itself");
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("a rule shows class, code, providers, priority and plain scope; patterns and fixtures open on demand", async () => {
  const app = await openApp({ rules: RULES }, { hash: "#/catalogue/rules" });
  try {
    const card = app.page.locator("[data-rule-id='wrapper.retry_limit.v1']");
    await card.waitFor();
    const text = await card.textContent();
    for (const part of [
      "Transient",
      "provider_unavailable",
      "wrapper",
      "priority 30",
      "any provider",
      "Provider service",
    ]) {
      assert.ok(text.includes(part), `card shows ${part}: ${text}`);
    }
    assert.ok(
      !(await app.page.locator("[data-rule-id='runtime.cancelled.v1']").textContent()).includes("AbortError"),
      "a pattern waits behind the disclosure",
    );
    const disclosure = card.locator("details");
    assert.equal(await disclosure.getAttribute("open"), null);
    await card.locator("summary").focus();
    await app.page.keyboard.press("Enter");
    await card.getByTestId("rule-details").waitFor();
    assert.equal(await disclosure.getAttribute("open"), "", "the keyboard opens it");
    const details = await card.getByTestId("rule-details").textContent();
    for (const part of ["exceeded retry limit", "codex/retry_limit_wraps_401.toml", "Wrapper:"]) {
      assert.ok(details.includes(part), `details show ${part}: ${details}`);
    }
    assert.equal(
      await card.getByTestId("rule-confidence").textContent(),
      "Medium confidence: sure enough of what it matches for automatic recovery to act on it.",
      "the confidence in a sentence, not the raw level beside a label",
    );
    assert.doesNotMatch(details.replace(/\s+/g, " "), /Confidence medium/);
    const cancelled = await app.page.locator("[data-rule-id='runtime.cancelled.v1']").textContent();
    assert.match(cancelled, /Outside provider recovery/);
    const list = await app.page.locator(".rules").textContent();
    assert.ok(!list.includes("out_of_scope") && !list.includes("out of scope"), "no raw scope name is shown");
    const structured = app.page.locator("[data-rule-id='codex.usage_limit.v1']");
    assert.match(await structured.textContent(), /Codex CLI, OpenAI API/);
    await structured.locator("summary").click();
    // The details render once the disclosure reports itself open.
    await structured.getByTestId("rule-details").waitFor();
    assert.match(
      await structured.textContent(),
      /structured fields only/,
      "a rule without text patterns says so instead of showing nothing",
    );
    assert.ok(
      await app.page.getByText("What the classes mean").isVisible(),
      "the class legend is visible, not hover-only",
    );
  } finally {
    await app.close();
  }
});

test("the playground sends the typed input and highlights the matched span", async () => {
  const sanitized = 'retry 1/3\nAPI Error: 529 {"type":"error","error":{"type":"overloaded_error"}}';
  const app = await openApp(
    { rules: RULES, playground: playground(sanitized, '"type":"overloaded_error"') },
    { hash: "#/catalogue/playground" },
  );
  try {
    const page = app.page;
    const form = panel(app, "Playground");
    const choices = await form.getByLabel("Provider").locator("option").allTextContents();
    assert.ok(choices.includes("Anthropic API") && choices.includes("Any command"), `in words: ${choices}`);
    assert.ok(!choices.some((c) => /^[a-z-]+$/.test(c)), `no provider is shown by its code name: ${choices}`);
    await form.getByLabel("Provider").selectOption("anthropic-api");
    await page.getByLabel("Failure text").fill("API Error: 529 overloaded");
    await page.getByLabel("HTTP status").fill("529");
    await page.getByLabel("Response headers").fill("Retry-After: 30\n\nx-request-id: abc");
    await page.getByRole("button", { name: "Classify" }).click();
    await page.getByTestId("playground-result").waitFor();

    const sent = (await app.calls()).filter((c) => c.cmd === "classify_text");
    assert.deepEqual(
      sent.map((c) => c.args),
      [
        {
          input: {
            provider: "anthropic-api",
            message: "API Error: 529 overloaded",
            http_status: 529,
            headers: { "retry-after": "30", "x-request-id": "abc" },
          },
        },
      ],
      "one call with the status as a number, blank header lines skipped and names lowercased",
    );

    assert.equal(await page.getByTestId("matched-span").textContent(), '"type":"overloaded_error"');
    assert.equal(
      await page.getByTestId("sanitized").textContent(),
      sanitized,
      "the whole sanitized text is shown, unchanged",
    );
    assert.equal(await page.getByTestId("result-code").textContent(), "Provider overloaded", "the code's words first");
    assert.equal(await page.getByTestId("result-raw-code").textContent(), "provider_overloaded", "the code as detail");
    const firstMatch = page.locator("[data-testid=match]").first();
    assert.equal(await firstMatch.getByTestId("match-code").textContent(), "Provider overloaded");
    assert.match(
      await firstMatch.locator(".hint").textContent(),
      /anthropic\.overloaded\.v1 · provider_overloaded · priority/,
    );
    assert.equal(await page.getByTestId("result-class").textContent(), "Transient");
    assert.equal(
      (await page.getByTestId("result-rule").textContent()).trim(),
      "Anthropic API overloaded_error (HTTP 529)",
      "the deciding rule by its title, from the catalogue's list",
    );
    assert.equal(await page.getByTestId("result-rule-id").isVisible(), false, "its id waits in Engine details");
    await page.getByTestId("result-internals").locator("summary").click();
    assert.equal(await page.getByTestId("result-rule-id").textContent(), "anthropic.overloaded.v1");
    assert.equal(
      await page.getByTestId("result-confidence").textContent(),
      "High confidence: sure of what it matches, so automatic recovery acts on it.",
    );
    assert.match(await page.getByTestId("result-explanation").textContent(), /is transient/);
    const timing = await page.getByTestId("result-timing").textContent();
    assert.match(timing, /Retry after: 30 s/);
    assert.match(timing, /retry-after header/, "the hint's source is named in words");
    assert.ok(await page.getByText("Only the sanitised text is shown").isVisible());
    assert.ok(await page.getByText("2 progress lines were ignored").isVisible());

    const outcomes = await page.locator("[data-testid=match]").evaluateAll((els) => els.map((e) => e.dataset.outcome));
    assert.deepEqual(outcomes, ["selected", "wrapped", "outranked"]);
    assert.ok(
      await page.getByText("dropped because a cause matched inside it").isVisible(),
      "outcomes are explained in words",
    );
    assert.deepEqual(app.errors, []);
  } finally {
    await app.close();
  }
});

test("the highlight lands on the exact span after multi-byte characters", async () => {
  // Byte offsets run ahead of string indices after "é", "—" and "🚧" (a
  // surrogate pair); a naive slice would mark text shifted to the right.
  const sanitized = "Błąd — zażółć 🚧 gęślą: overloaded_error, spróbuj później";
  const app = await openApp(
    { playground: playground(sanitized, "overloaded_error") },
    { hash: "#/catalogue/playground" },
  );
  try {
    await app.page.getByLabel("Failure text").fill("anything");
    await app.page.getByRole("button", { name: "Classify" }).click();
    assert.equal(await app.page.getByTestId("matched-span").textContent(), "overloaded_error");
    assert.equal(await app.page.getByTestId("sanitized").textContent(), sanitized);
    assert.ok(
      await app.page.getByText("Matched “overloaded_error”").isVisible(),
      "the match list quotes the same span",
    );
  } finally {
    await app.close();
  }
});

test("a header line without a colon is named and nothing is sent", async () => {
  const app = await openApp(
    { playground: playground("x overloaded_error", "overloaded_error") },
    { hash: "#/catalogue/playground" },
  );
  try {
    await app.page.getByLabel("Failure text").fill("some failure");
    await app.page.getByLabel("Response headers").fill("retry-after: 30\nthis line has no colon");
    await app.page.getByRole("button", { name: "Classify" }).click();
    assert.match(await app.page.getByTestId("error-headers").textContent(), /^Line 2: .*no colon/);
    assert.equal(await app.page.getByLabel("Response headers").getAttribute("aria-invalid"), "true");
    assert.equal(
      (await app.calls()).filter((c) => c.cmd === "classify_text").length,
      0,
      "invalid input never reaches the backend",
    );
  } finally {
    await app.close();
  }
});

test("a backend validation error appears at its field", async () => {
  const app = await openApp(
    {
      playground: playground("x overloaded_error", "overloaded_error"),
      failNext: {
        classify_text: {
          code: "validation",
          message: "HTTP status must be 100–599 (99 is not an HTTP status)",
          fields: [{ path: "http_status", message: "HTTP status must be 100–599 (99 is not an HTTP status)" }],
        },
      },
    },
    { hash: "#/catalogue/playground" },
  );
  try {
    await app.page.getByLabel("Failure text").fill("some failure");
    await app.page.getByLabel("HTTP status").fill("404");
    await app.page.getByRole("button", { name: "Classify" }).click();
    assert.equal(
      await app.page.getByTestId("error-http_status").textContent(),
      "HTTP status must be 100–599 (99 is not an HTTP status)",
    );
    assert.equal(await app.page.getByLabel("HTTP status").getAttribute("aria-invalid"), "true");

    // The UI keeps no copy of the range: 700 goes to the backend, whose
    // refusal is shown at the field.
    await app.page.evaluate(() => {
      window.__SCENARIO__.failNext = {
        classify_text: {
          code: "validation",
          message: "HTTP status must be 100–599 (700 is not an HTTP status)",
          fields: [{ path: "http_status", message: "HTTP status must be 100–599 (700 is not an HTTP status)" }],
        },
      };
    });
    await app.page.getByLabel("HTTP status").fill("700");
    await app.page.getByRole("button", { name: "Classify" }).click();
    await app.page.getByText("HTTP status must be 100–599 (700 is not an HTTP status)").waitFor();
    assert.equal(
      await app.page.getByTestId("error-http_status").textContent(),
      "HTTP status must be 100–599 (700 is not an HTTP status)",
    );
    const sent = (await app.calls()).filter((c) => c.cmd === "classify_text");
    assert.equal(sent.length, 2);
    assert.equal(sent[1].args.input.http_status, 700);
  } finally {
    await app.close();
  }
});

test("exporting inbox evidence shows where the fixture was written and its text", async () => {
  const app = await openApp({ inbox: INBOX }, { hash: "#/catalogue/inbox" });
  try {
    const item = app.page.getByTestId("inbox-item");
    await item.waitFor();
    assert.match(await item.textContent(), /flux capacitor/);
    assert.match(
      await app.page.getByRole("tab", { name: /Inbox/ }).textContent(),
      /1/,
      "the tab shows how many items wait",
    );
    await item.getByRole("button", { name: "Export as fixture" }).click();
    await app.page.getByTestId("fixture-export").waitFor();
    assert.equal(
      await app.page.getByTestId("fixture-path").textContent(),
      "/tmp/fixtures/unclassified-route7-attempt2.toml",
    );
    assert.equal(await app.page.getByTestId("fixture-text").textContent(), 'description = "exported"\n');
    assert.match(await app.page.getByTestId("fixture-export").textContent(), /fixtures\/catalogue\/claude-code\//);
    const sent = (await app.calls()).filter((c) => c.cmd === "export_fixture").map((c) => c.args);
    assert.deepEqual(sent, [{ routeId: 7, attempt: 2 }]);
  } finally {
    await app.close();
  }
});

test("inbox evidence opens in the playground, ready to classify again", async () => {
  const item = { ...INBOX[0], evidence: { ...INBOX[0].evidence, http_status: 503, headers: { "retry-after": "12" } } };
  const app = await openApp(
    { inbox: [item], playground: playground("x overloaded_error", "overloaded_error") },
    { hash: "#/catalogue/inbox" },
  );
  try {
    await app.page.getByRole("button", { name: "Try in playground" }).click();
    assert.equal(await app.page.getByRole("tab", { name: "Playground" }).getAttribute("aria-selected"), "true");
    await app.page.getByRole("button", { name: "Classify" }).click();
    await app.page.getByTestId("playground-result").waitFor();
    const sent = (await app.calls()).filter((c) => c.cmd === "classify_text").map((c) => c.args.input);
    assert.deepEqual(
      sent,
      [{ provider: "claude-code", message: item.evidence.message, http_status: 503, headers: { "retry-after": "12" } }],
      "the stored sanitized evidence is sent as it was recorded",
    );
  } finally {
    await app.close();
  }
});

test("an export failure is shown on the item", async () => {
  const app = await openApp(
    { inbox: INBOX, failNext: { export_fixture: { code: "io", message: "could not write /x: denied", fields: [] } } },
    { hash: "#/catalogue/inbox" },
  );
  try {
    await app.page.getByRole("button", { name: "Export as fixture" }).click();
    assert.match(
      await app.page.getByRole("alert").textContent(),
      /Could not export the fixture: could not write \/x: denied/,
    );
  } finally {
    await app.close();
  }
});

test("an empty inbox explains what it is for", async () => {
  const app = await openApp({ inbox: [] }, { hash: "#/catalogue/inbox" });
  try {
    const empty = app.page.getByTestId("inbox-empty");
    await empty.waitFor();
    assert.match(await empty.textContent(), /no catalogue rule knows/);
  } finally {
    await app.close();
  }
});

test("tabs switch by arrow keys and keep pasted text", async () => {
  const app = await openApp({ rules: RULES }, { hash: "#/catalogue/playground" });
  try {
    await app.page.getByLabel("Failure text").fill("kept across tabs");
    await app.page.getByRole("tab", { name: "Playground" }).focus();
    await app.page.keyboard.press("ArrowRight");
    assert.equal(await app.page.getByRole("tab", { name: /Inbox/ }).getAttribute("aria-selected"), "true");
    assert.match(app.page.url(), /#\/catalogue\/inbox$/, "the open tab survives a reload");
    await app.page.keyboard.press("ArrowLeft");
    assert.equal(await app.page.getByLabel("Failure text").inputValue(), "kept across tabs");
  } finally {
    await app.close();
  }
});

for (const tab of ["Rules", "Playground", "Inbox"]) {
  test(`${tab} tab at 390×844: no sideways overflow, one scroll owner, 44 px targets`, async () => {
    const sanitized = "x".repeat(300) + " 🚧 " + LONG_PATTERN + " overloaded_error";
    const app = await openApp(
      {
        rules: RULES,
        inbox: [{ ...INBOX[0], evidence: { ...INBOX[0].evidence, message: "y".repeat(400) } }],
        playground: playground(sanitized, "overloaded_error"),
      },
      { width: 390, height: 844, hash: "#/catalogue" },
    );
    try {
      await openTab(app, new RegExp(`^${tab}`));
      if (tab === "Playground") {
        await app.page.getByLabel("Failure text").fill("z".repeat(500));
        await app.page.getByLabel("Response headers").fill("retry-after: 30");
        await app.page.getByRole("button", { name: "Classify" }).click();
        await app.page.getByTestId("playground-result").waitFor();
      }
      if (tab === "Inbox") {
        await app.page.getByRole("button", { name: "Export as fixture" }).click();
        await app.page.getByTestId("fixture-export").waitFor();
      }
      if (tab === "Rules") await app.page.waitForSelector("[data-testid=rule]");
      const o = await horizontalOverflow(app.page);
      // The frame's nav tabs scroll sideways inside their own strip by design.
      const over = o.over.filter((el) => el !== "a.tab");
      assert.ok(o.scrollWidth <= o.width && over.length === 0, `overflow: ${JSON.stringify(o)}`);
      assert.deepEqual(await smallTargets(app.page), []);
      assert.deepEqual(await scrollOwners(app.page), ["main#main"], "only <main> scrolls: no inner scroll boxes");
    } finally {
      await app.close();
    }
  });
}

test("a rule row is titled by its code's words, the code in the small meta line, its description as a sentence", async () => {
  const app = await openApp({ rules: RULES }, { hash: "#/catalogue/rules" });
  try {
    const card = app.page.locator("[data-rule-id='wrapper.retry_limit.v1']");
    await card.waitFor();
    assert.equal(await card.getByTestId("rule-code").textContent(), "Provider unavailable");
    assert.equal(
      await card.getByTestId("rule-raw-code").textContent(),
      "provider_unavailable",
      "the stored code stays in view, as secondary detail",
    );
    assert.equal(
      await card.locator(".desc").textContent(),
      "An exceeded retry limit around some other cause",
      "a description written lower-case starts upper-case in display",
    );
    const meta = (await card.getByTestId("rule-meta").textContent()).replace(/\s+/g, " ");
    assert.match(meta, /Provider service · wrapper/, `a space on both sides of each dot: ${meta}`);
  } finally {
    await app.close();
  }
});

test("an inbox item says its code in words and when it was seen, in British spelling", async () => {
  const app = await openApp({ inbox: INBOX }, { hash: "#/catalogue/inbox" });
  try {
    const item = app.page.getByTestId("inbox-item");
    await item.waitFor();
    assert.equal(
      (await item.getByTestId("inbox-code").textContent()).trim(),
      "Not recognised (unknown)",
      "the words, then the raw code set apart",
    );
    assert.equal(await item.getByTestId("inbox-phase").textContent(), "When the agent exited");
    const facts = (await item.locator(".facts").textContent()).replace(/\s+/g, " ");
    assert.match(facts, /Seen When the agent exited/);
    assert.doesNotMatch(facts, /Phase/, "no engine jargon");
    assert.ok(await item.getByText("Sanitised message:").isVisible());
  } finally {
    await app.close();
  }
});
