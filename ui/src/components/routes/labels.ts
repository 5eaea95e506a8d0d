// Words for route states, actions and outcomes, shared by the route views.
import type {
  Actor,
  AttemptOutcome,
  Exhausted,
  ManualAction,
  RouteSnapshot,
  RouteState,
  ToolStatus,
} from "../../lib/types";
import { countdown, dateTime, sentence } from "../../lib/format";
import {
  ACTION_HELP,
  ACTION_LABEL as BACKEND_ACTION_LABEL,
  DISPATCHING_ACTIONS,
  STATE_TEXT as BACKEND_STATE_TEXT,
} from "../../bindings";

/** Lower-case state text, as used in announcements ("Route 7: retry scheduled"): the backend's words, which the CLI prints too. */
export const STATE_TEXT: Readonly<Record<RouteState, string>> = BACKEND_STATE_TEXT;

/** Badge text for a state. */
export function stateLabel(state: RouteState): string {
  return sentence(STATE_TEXT[state]);
}

/** An action's name, as its button and the backend's refusals say it. */
export const ACTION_LABEL: Readonly<Record<ManualAction, string>> = BACKEND_ACTION_LABEL;

/** Who took a manual action, as the history says it. */
export const ACTOR_LABEL: Record<Actor, string> = {
  app: "from the app",
  cli: "from the command line",
};

/** Help for each action, written by the backend (`recourse action --help` says the same); `actionHint` words it for the route's state. */
const ACTION_HINT: Readonly<Record<ManualAction, string>> = ACTION_HELP;

/** Actions that start an agent (the backend's transition table), and so may repeat work already done. */
const REPEATS: readonly ManualAction[] = DISPATCHING_ACTIONS;

/** Whether `action` starts an agent (the backend's transition table). */
export function dispatches(action: ManualAction): boolean {
  return REPEATS.includes(action);
}

/**
 * When an agent may already have done work — the safety gate refused
 * automatic recovery, or the route was stopped (or its engine lost) while
 * an agent ran — an action that sends the prompt again may repeat that
 * work: this says why (the backend's `repeat_risk`, the same rule the CLI
 * and the engine apply), and the action asks before it runs. Null otherwise.
 */
export function repeatRisk(action: ManualAction, s: RouteSnapshot): string | null {
  if (!s.repeat_risk || !REPEATS.includes(action)) return null;
  return `May repeat work: ${s.repeat_risk}.`;
}

/** The provider's reset the current candidate waits for, while it is still ahead. */
export function resetAhead(s: RouteSnapshot, nowMs: number): string | null {
  return s.provider_reset_at && Date.parse(s.provider_reset_at) > nowMs ? s.provider_reset_at : null;
}

/** The help text of an action for the route as it is now. */
export function actionHint(action: ManualAction, s: RouteSnapshot, nowMs: number): string {
  const reset = resetAhead(s, nowMs);
  const base = (() => {
    if (action === "retry_now" && s.cannot_start)
      return "Run the same program again: it fails the same way until the program or directory is fixed.";
    if (action === "retry_now" && s.state === "waiting_reset")
      return "Run the attempt now instead of at the provider's reset: until then it will most likely fail again.";
    if (action === "retry_now" && reset)
      return `Run the current candidate again now: its provider's limit resets at ${dateTime(reset)}, and until then a retry will most likely fail again.`;
    if (action === "retry_now" && s.state === "retry_scheduled")
      return "Run the scheduled attempt now instead of at the deadline.";
    if (action === "skip_now" && s.skip_to) return `Leave this candidate and run ${s.skip_to}.`;
    return ACTION_HINT[action];
  })();
  const risk = repeatRisk(action, s);
  return risk ? `${base} ${risk}` : base;
}

/**
 * The action that fits the state, shown as the primary button; null when
 * the fitting course is to wait (the engine acts at the deadline), when a
 * retry would certainly fail again (the provider's reset is still ahead,
 * the program cannot start: a skip is pushed instead when there is a next
 * candidate), or when every way on may repeat work, so no button is pushed
 * at the person.
 */
export function primaryAction(s: RouteSnapshot, nowMs: number): ManualAction | null {
  if (s.repeat_risk) return null;
  if (s.state === "stopped") return s.actions.includes("resume") ? "resume" : null;
  if (s.state !== "needs_manual") return null;
  if (s.cannot_start || resetAhead(s, nowMs)) return s.actions.includes("skip_now") ? "skip_now" : null;
  return s.actions.includes("retry_now") ? "retry_now" : null;
}

/** What follows when the current candidate's pending wait or retry is used up. */
export function pendingText(outcome: Exhausted, s: RouteSnapshot): string {
  if (outcome === "stop") return "If it still fails: stop for manual recovery";
  return s.skip_to
    ? `If it still fails: skip to ${s.skip_to}`
    : "If it still fails: no candidate is left to skip to, so the route will wait for you";
}

export const OUTCOME_LABEL: Record<AttemptOutcome, string> = {
  succeeded: "Succeeded",
  failed: "Failed",
  killed: "Killed",
  interrupted: "Interrupted",
};

export const TOOL_STATUS_LABEL: Record<ToolStatus, string> = {
  started: "Running",
  completed: "Completed",
  failed: "Failed",
  refused: "Refused",
};

/** `Candidate 2 of 3: “Codex”`: the name in quotes, as it may hold colons
 * and parentheses of its own (`Codex (simulated): a tool ran, …`). */
export function candidateText(s: RouteSnapshot): string {
  return `Candidate ${s.candidate_index + 1} of ${s.candidate_count}: “${s.candidate_name}”`;
}

/**
 * The wait line of a waiting route (`Retry 2 of 3 in 7 s`, `Waiting for
 * provider reset: 38 s`), or null. At the deadline it reads "due now": the
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
