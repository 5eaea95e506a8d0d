// Words for an account's state, marks and chart, shared by the Accounts view.
import type { AccountStatus, AccountView, HourBar, MarkView } from "../../lib/types";
import { countdown, dateTime } from "../../lib/format";

/** The badge of an account's state. */
export function statusBadge(s: AccountStatus): { text: string; tone: "good" | "warn" | "bad" | "info" } {
  switch (s.kind) {
    case "ready":
      return { text: "Ready", tone: "good" };
    case "limited":
      return { text: "Limited", tone: "warn" };
    case "refused":
      return { text: "Refused", tone: "bad" };
    case "probing":
      return { text: "Probing", tone: "info" };
    case "reset_passed":
      return { text: "Reset passed", tone: "info" };
  }
}

/** The state in a sentence, with a live countdown while it is limited. */
export function statusText(s: AccountStatus, nowMs: number): string {
  switch (s.kind) {
    case "ready":
      return "No limit known: routes dispatch to it.";
    case "limited": {
      const due = Date.parse(s.until) <= nowMs;
      return due
        ? `Limited until ${dateTime(s.until)}: reset now; the next dispatch tries it.`
        : `Limited until ${dateTime(s.until)} (in ${countdown(s.until, nowMs)}).`;
    }
    case "refused":
      return "Its credentials or billing were refused: limited until you clear it.";
    case "probing":
      return `Its limit has reset and route ${s.route_id} is trying it; the others wait for its answer.`;
    case "reset_passed":
      return "Its limit has reset; the next route to dispatch tries it.";
  }
}

/** One mark: `hard usage_limit_reached, until 13:02 (the provider's reset), from route 3`. */
export function markText(m: MarkView): string {
  const until = m.until
    ? `until ${dateTime(m.until)} (${m.trusted ? "the provider's reset" : "a default hold: the provider gave no reset"})`
    : "until cleared";
  const model = m.model ? ` on model ${m.model}` : "";
  return `${until}${model}; from route ${m.route_id}, attempt ${m.attempt}`;
}

/** `1 running of 2` / `1 running, no limit`. */
export function runningText(a: AccountView): string {
  return a.limit === null ? `${a.running} running, no limit` : `${a.running} running of ${a.limit}`;
}

/** The chart in words, for screen readers and the caption. */
export function chartSummary(bars: HourBar[]): string {
  const sum = (f: (b: HourBar) => number) => bars.reduce((n, b) => n + f(b), 0);
  const ok = sum((b) => b.succeeded);
  const transient = sum((b) => b.transient);
  const hard = sum((b) => b.hard);
  const other = sum((b) => b.other);
  if (ok + transient + hard + other === 0) return "No attempts in the last 24 hours.";
  return `Last 24 hours: ${ok} succeeded, ${transient} failed transient, ${hard} failed hard, ${other} other.`;
}
