// Words for route states, actions and outcomes, shared by the route views.
import type { AttemptOutcome, Exhausted, ManualAction, RouteSnapshot, RouteState } from "../../lib/types";
import { countdown } from "../../lib/format";

/** Lower-case state text, as used in announcements ("Route 7: retry scheduled"). */
export const STATE_TEXT: Record<RouteState, string> = {
  running: "running",
  waiting_reset: "waiting for provider reset",
  retry_scheduled: "retry scheduled",
  needs_manual: "needs manual recovery",
  stopped: "stopped",
  succeeded: "succeeded",
};

/** Badge text for a state. */
export function stateLabel(state: RouteState): string {
  const t = STATE_TEXT[state];
  return t.charAt(0).toUpperCase() + t.slice(1);
}

export const ACTION_LABEL: Record<ManualAction, string> = {
  retry_now: "Retry now",
  skip_now: "Skip now",
  cancel_wait: "Cancel wait",
  stop: "Stop",
  resume: "Resume",
};

export const ACTION_HINT: Record<ManualAction, string> = {
  retry_now: "Run the current candidate again now, with its retries and reset wait renewed.",
  skip_now: "Leave this candidate and run the next one.",
  cancel_wait: "Stop waiting; the route waits for you instead.",
  stop: "End the route; Resume starts a fresh cycle.",
  resume: "Start a fresh cycle on the current candidate: budgets renewed, skipped candidates back.",
};

/** The help text of an action in `state`: retry-now during a wait only runs the scheduled attempt early. */
export function actionHint(action: ManualAction, state: RouteState): string {
  if (action === "retry_now" && (state === "waiting_reset" || state === "retry_scheduled")) {
    return "Run the scheduled attempt now instead of at the deadline.";
  }
  return ACTION_HINT[action];
}

export const PENDING_TEXT: Record<Exhausted, string> = {
  skip: "When exhausted: skip to the next candidate",
  stop: "When exhausted: stop for manual recovery",
};

export const OUTCOME_LABEL: Record<AttemptOutcome, string> = {
  succeeded: "Succeeded",
  failed: "Failed",
  killed: "Killed",
  interrupted: "Interrupted",
};

/** `Candidate 2 of 3: Codex`. */
export function candidateText(s: RouteSnapshot): string {
  return `Candidate ${s.candidate_index + 1} of ${s.candidate_count}: ${s.candidate_name}`;
}

/**
 * The wait line of a waiting route (`Retry 2 of 3 in 0:07`, `Waiting for
 * provider reset: 0:38`), or null. At the deadline it reads "due now": the
 * engine, not the browser, dispatches the attempt.
 */
export function waitText(s: RouteSnapshot, nowMs: number): string | null {
  if (!s.deadline || (s.state !== "waiting_reset" && s.state !== "retry_scheduled")) return null;
  const due = Date.parse(s.deadline) <= nowMs;
  const left = due ? "due now" : countdown(s.deadline, nowMs);
  if (s.state === "waiting_reset") return `Waiting for provider reset: ${left}`;
  const which = s.retry ? `Retry ${s.retry.ordinal} of ${s.retry.max}` : "Retry";
  return due ? `${which} due now` : `${which} in ${left}`;
}

/** A local date and time for an ISO instant. */
export function timeText(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}
