// Formatting of dates, durations, countdowns and policy summaries, shared by
// views: every date and time in the app goes through `dateTime`.
import type { CandidatePolicy, ClassPolicy, PolicyClass } from "./types";

/** `5 s`, `2 min 5 s`, `4 h 19 min`, `2 d 3 h`. */
export function formatSeconds(total: number): string {
  const s = Math.max(0, Math.round(total));
  if (s < 60) return `${s} s`;
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (d > 0) return h > 0 ? `${d} d ${h} h` : `${d} d`;
  if (h > 0) return m > 0 ? `${h} h ${m} min` : `${h} h`;
  return sec > 0 ? `${m} min ${sec} s` : `${m} min`;
}

/** Time left until an absolute deadline, as `m:ss` or `h:mm:ss`. */
export function countdown(deadlineIso: string, nowMs: number): string {
  const left = Math.max(0, Math.ceil((Date.parse(deadlineIso) - nowMs) / 1000));
  const h = Math.floor(left / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = left % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** The app's one date and time format: `4 Dec 2026, 17:25:03` (in the person's locale). */
export function dateTime(iso: string): string {
  return DATE_TIME.format(new Date(iso));
}

/** How long ago `iso` was: `just now`, `40 s ago`, `3 min ago`, `5 h ago`, `2 d ago`. */
export function relativeTime(iso: string, nowMs: number): string {
  const s = Math.max(0, Math.floor((nowMs - Date.parse(iso)) / 1000));
  if (s < 10) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export const CLASS_LABEL: Record<PolicyClass, string> = { transient: "Transient", hard: "Hard" };

/** One clause: `retry 3× from 5 s, then skip`. */
export function sectionSummary(section: ClassPolicy): string {
  const parts: string[] = [];
  if (section.wait_for_reset.enabled)
    parts.push(`wait for reset ≤ ${formatSeconds(section.wait_for_reset.max_wait_seconds)}`);
  if (section.retry.enabled) {
    parts.push(`retry ${section.retry.max_retries}× from ${formatSeconds(section.retry.initial_interval_seconds)}`);
  }
  const outcome = section.on_exhausted === "stop" ? "stop" : "skip";
  return parts.length === 0 ? outcome : `${parts.join(", ")}, then ${outcome}`;
}

/** `Transient: retry 3× from 5 s, then skip · Hard: stop`. */
export function policySummary(policy: CandidatePolicy): string {
  return `Transient: ${sectionSummary(policy.transient)} · Hard: ${sectionSummary(policy.hard)}`;
}

const UNITS: [string, number][] = [
  ["d", 86_400],
  ["h", 3_600],
  ["min", 60],
  ["s", 1],
];

/** "90 s", "15 min", "4 h", "1 d": the largest unit that divides exactly. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return String(seconds);
  const [unit, size] = UNITS.find(([, size]) => seconds % size === 0) ?? ["s", 1];
  return `${seconds / size} ${unit}`;
}

/** Seconds from "900", "90 s", "15 min", "1.5 h", "2 d"; null when the text
 * is not a whole number of seconds in one of those forms. */
export function parseDuration(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)?\s*$/i.exec(text);
  if (!m) return null;
  const unit = (m[2] ?? "s").toLowerCase();
  const size = unit.startsWith("d") ? 86_400 : unit.startsWith("h") ? 3_600 : unit.startsWith("m") ? 60 : 1;
  const seconds = Number(m[1]) * size;
  return Number.isSafeInteger(seconds) ? seconds : null;
}
