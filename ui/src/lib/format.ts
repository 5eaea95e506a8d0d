// Formatting of dates, durations, countdowns and policy summaries, shared by
// views: every date and time in the app goes through `dateTime`.
import type { Class } from "./types";

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

/** Time left until an absolute deadline, in the one duration style
 * (`formatSeconds`): `29 s`, `4 min 5 s`, `1 h 2 min`. Rounded up, so a
 * fresh 5 s wait reads `5 s` and only a passed deadline reads `0 s`. */
export function countdown(deadlineIso: string, nowMs: number): string {
  return formatSeconds(Math.max(0, Math.ceil((Date.parse(deadlineIso) - nowMs) / 1000)));
}

const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** The app's one date and time format: `4 Dec 2026, 17:25:03` (in the person's locale). */
export function dateTime(iso: string): string {
  return DATE_TIME.format(new Date(iso));
}

/** Backend text with every RFC 3339 instant in it (`2026-12-04T17:25:03Z`)
 * written by `dateTime`, so a decision reads like every other time shown. */
export function readableTimes(text: string): string {
  return text.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)/g, (iso) => dateTime(iso));
}

/** A backend reason or decision worded as a fragment (so the CLI can put
 * it after a label) shown where it stands alone: upper-case first. */
export function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `text` as a whole sentence: capitalised, ending in a full stop unless it ends in one already. */
export function asSentence(text: string): string {
  const s = sentence(text.trim());
  return /[.!?…]$/.test(s) ? s : `${s}.`;
}

/** Parts named in a sentence: `a`, `a and b`, `a, b and c`. */
export function inWords(parts: readonly string[]): string {
  return parts.length < 2 ? (parts[0] ?? "") : `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
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

/** A failure class as its badge reads, everywhere one is shown. */
export const CLASS_LABEL: Record<Class, string> = {
  transient: "Transient",
  hard: "Hard",
  unclassified: "Unclassified",
};

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

/** What a field's text means: the whole number it names, or why it names none. */
export type Reading = { value: number } | { error: string };

/** The largest value a field can send (the backend stores u32). */
const U32_MAX = 4_294_967_295;

/** A whole number typed in a field, read exactly as written: no rounding,
 * no blank-as-zero. Values a field cannot send (negative, beyond u32) are
 * refused here, naming the typed text; every other bound is the backend
 * validator's call. */
export function readWhole(text: string, bounds: { min: number; max: number }): Reading {
  const t = text.trim();
  if (t === "") return { error: "required: write a whole number" };
  if (/^[+-]?(\d+\.\d*|\.\d+)$/.test(t)) return { error: `${t} is not a whole number: whole numbers only` };
  if (!/^[+-]?\d+$/.test(t)) return { error: `“${t}” is not a number` };
  const n = BigInt(t);
  if (n < 0n || n > BigInt(U32_MAX)) return { error: `${t} is out of range: ${bounds.min} to ${bounds.max}` };
  return { value: Number(n) };
}

const UNIT_OF: Record<string, number> = { s: 1, min: 60, h: 3_600, d: 86_400 };

/** The unit a duration's text is written in (a bare number is seconds). */
export function unitOf(text: string): DurationUnit | null {
  const m = DURATION.exec(text);
  return m ? canonicalUnit(m[2]) : null;
}
export type DurationUnit = "s" | "min" | "h" | "d";
export const DURATION_UNITS: DurationUnit[] = ["s", "min", "h", "d"];

const DURATION = /^\s*([+-]?\d*\.?\d*)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)?\s*$/i;

function canonicalUnit(unit: string | undefined): DurationUnit {
  const u = (unit ?? "s").toLowerCase();
  return u.startsWith("d") ? "d" : u.startsWith("h") ? "h" : u.startsWith("m") ? "min" : "s";
}

/** Seconds from "900", "90 s", "15 min", "1.5 h", "2 d", read exactly:
 * a duration that is not a whole number of seconds is refused, never rounded. */
export function readDuration(text: string): Reading {
  const t = text.trim();
  if (t === "") return { error: "required: write a duration such as 90 s, 15 min, 4 h or 1 d" };
  const m = DURATION.exec(t);
  if (!m || !/\d/.test(m[1])) return { error: `“${t}” is not a duration: write a number with s, min, h or d` };
  const unit = canonicalUnit(m[2]);
  const number = m[1];
  if (number.startsWith("-")) return { error: `${t} is negative: durations start at 1 s` };
  const [whole, fraction = ""] = number.replace(/^\+/, "").split(".");
  // Exact decimal arithmetic: 1.5 h is 5400 s, 0.1 s is refused.
  const scale = 10n ** BigInt(fraction.length);
  const scaled = BigInt(whole || "0") * scale + BigInt(fraction || "0");
  const total = scaled * BigInt(UNIT_OF[unit]);
  if (total % scale !== 0n) return { error: `${t} is not a whole number of seconds` };
  const seconds = total / scale;
  if (seconds > BigInt(U32_MAX)) return { error: `${t} is far too long` };
  return { value: Number(seconds) };
}

/** Every unit of a duration, exactly: `7 d 1 s`, `1 h 30 min`. */
export function exactDuration(seconds: number): string {
  const parts: string[] = [];
  let left = seconds;
  for (const [unit, size] of UNITS) {
    const n = Math.floor(left / size);
    if (n > 0) parts.push(`${n} ${unit}`);
    left -= n * size;
  }
  return parts.length === 0 ? "0 s" : parts.join(" ");
}
