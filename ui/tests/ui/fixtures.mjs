// Scenario data shared by UI tests: shaped like the backend's answers.
import { readFileSync } from "node:fs";

export const NOW = new Date().toISOString();

/** The policy limits as the generated bindings export them from Rust. */
export const POLICY_LIMITS = JSON.parse(
  /export const POLICY_LIMITS = (.*) as const;/.exec(
    readFileSync(new URL("../../src/bindings.ts", import.meta.url), "utf8"),
  )[1],
);

export function immediate(on_exhausted) {
  return {
    wait_for_reset: { enabled: false, max_wait_seconds: 0 },
    retry: { enabled: false, max_retries: 0, initial_interval_seconds: 0 },
    on_exhausted,
  };
}

/** The unclassified exception switched off, as the backend sends it when nobody opted in. */
export const UNCLASSIFIED_OFF = { repeated_failure: { enabled: false, threshold: 0 } };

/** A stored candidate; a policy given without its unclassified section has it off, as the backend reads it. */
export function candidate(id, name, kind, policy) {
  return {
    id,
    name,
    enabled: true,
    agent: {
      kind,
      program: null,
      args: [],
      model: null,
      script:
        kind === "simulated"
          ? [
              { outcome: "overloaded", after_ms: 800 },
              { outcome: "succeed", after_ms: 1000 },
            ]
          : [],
      env: {},
      config_dir: null,
      timeouts: { idle_s: 900, total_s: 14400 },
    },
    policy: { unclassified: UNCLASSIFIED_OFF, ...policy },
    policy_revision: 1,
  };
}

export const RETRY_3_FROM_5_THEN_SKIP = {
  wait_for_reset: { enabled: false, max_wait_seconds: 0 },
  retry: { enabled: true, max_retries: 3, initial_interval_seconds: 5 },
  on_exhausted: "skip",
};

export const demoProfile = () => ({
  id: 1,
  name: "Demo (simulated)",
  revision: 1,
  created_at: NOW,
  updated_at: NOW,
  candidates: [
    candidate(11, "Claude (simulated)", "simulated", { transient: RETRY_3_FROM_5_THEN_SKIP, hard: immediate("stop") }),
    candidate(12, "Codex", "codex", { transient: immediate("skip"), hard: immediate("skip") }),
  ],
});

/** A route snapshot as the backend sends one; `extra` overrides any field. */
export function routeSnapshot(id, state, extra = {}) {
  return {
    id,
    profile_name: "Everyday",
    state,
    generation: 3,
    candidate_index: 0,
    candidate_name: "Claude",
    candidate_count: 3,
    last_failure: null,
    retry: null,
    pending_outcome: null,
    skip_to: "Codex",
    repeat_risk: null,
    deadline: null,
    provider_reset_at: null,
    manual_reason: null,
    cannot_start: false,
    queued: null,
    account: null,
    prompt_excerpt: `Fix the flaky test in module ${id}`,
    cwd: "/home/me/project",
    archived_at: null,
    attempts: 1,
    owner: "engine-1",
    created_at: iso(-(100 - id) * 60e3),
    updated_at: iso(-1000),
    actions: [],
    ...extra,
  };
}

const iso = (msFromNow) => new Date(Date.now() + msFromNow).toISOString();
const hourStart = (hoursAgo) => {
  const d = new Date();
  d.setUTCMinutes(0, 0, 0);
  return new Date(d.getTime() - hoursAgo * 3600e3).toISOString();
};

/** 24 hourly bars, the last with some attempts. */
function chart(last = { succeeded: 3, transient: 1, hard: 2, other: 0 }) {
  return Array.from({ length: 24 }, (_, i) => ({
    start: hourStart(23 - i),
    ...(i === 23 ? last : { succeeded: 0, transient: 0, hard: 0, other: 0 }),
  }));
}

function account(id, extra = {}) {
  return {
    id,
    name: id,
    labelled: true,
    derivation: null,
    kinds: ["claude_code"],
    candidates: [{ profile: "Everyday", candidate: "opus" }],
    status: { kind: "ready" },
    marks: [],
    waiting: [],
    running: 0,
    limit: null,
    chart: chart({ succeeded: 0, transient: 0, hard: 0, other: 0 }),
    ...extra,
  };
}

/** An attempt as the backend sends one: failed, nothing classified; `extra` overrides any field. */
export function routeAttempt(number, extra = {}) {
  return {
    number,
    generation: number,
    candidate_index: 0,
    candidate_name: "Claude",
    invocation_id: `inv-${number}`,
    started_at: iso(-120e3),
    finished_at: iso(-110e3),
    outcome: "failed",
    classification: null,
    decision: null,
    policy_revision: 2,
    excerpt: null,
    exit_code: null,
    in_inbox: false,
    input: { kind: "prompt" },
    ...extra,
  };
}

/** When the `work` account's mark of `accountsOverview` ends: 65 min from the module's load. */
export const limitedUntil = iso(65 * 60e3);

/** Two accounts as the backend's `accounts` answers: `work` limited by a
 * usage window (routes waiting, 1 of 2 running, attempts in the last hour),
 * and a derived one whose limit reset and which route 9 probes. */
export function accountsOverview() {
  return {
    accounts: [
      account("work", {
        status: { kind: "limited", until: limitedUntil },
        marks: [
          {
            model: null,
            code: "usage_limit_reached",
            class: "hard",
            rule_id: "claude_code.usage_limit_epoch.v1",
            limit: "window",
            until: limitedUntil,
            trusted: true,
            created_at: iso(-60e3),
            route_id: 3,
            attempt: 1,
            probe_route: null,
          },
        ],
        waiting: [3, 4, 5],
        running: 1,
        limit: 2,
        chart: chart(),
      }),
      account("claude-code#3f9a1c2b7d0e", {
        name: "Claude Code account of “opus”",
        labelled: false,
        derivation:
          "Worked out from the candidate's settings (config folder, credentials and endpoint), as no account label is set: candidates with the same ones share this account.",
        status: { kind: "probing", route_id: 9 },
      }),
    ],
    max_running: 4,
    running: 1,
    at: iso(0),
  };
}

/** One previewed step, for a scenario whose preview describes a schedule. */
export const previewStep = (text) => ({
  step: {
    failure: 0,
    at: new Date().toISOString(),
    candidate: 0,
    candidate_name: "Claude (simulated)",
    code: "provider_overloaded",
    class: "transient",
    gate: "allowed",
    decision: {
      kind: "retry",
      class: "transient",
      at: new Date(Date.now() + 5000).toISOString(),
      ordinal: 1,
      max_retries: 3,
      delay_seconds: 5,
    },
  },
  text,
});
