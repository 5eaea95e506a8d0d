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
    policy,
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
