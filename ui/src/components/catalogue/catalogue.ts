// Pure helpers of the Catalogue area: plain-word labels, rule filtering,
// header parsing for the playground, and byte-span highlighting of
// sanitized text (the engine reports spans as UTF-8 byte offsets).
import { CLASS_LABEL, sentence } from "../../lib/format";
import { CODE_WORDS, PASTABLE_PROVIDERS, PROVIDER_WORDS, PROVIDERS_SEEING_EVERY_RULE } from "../../bindings";
import type {
  Class,
  Confidence,
  HintSource,
  MatchOutcome,
  Phase,
  Provider,
  RuleView,
  Scope,
  Span,
} from "../../lib/types";

/** Providers a person can pick in the playground (simulated is internal),
 * from the backend's own list. */
export const PLAYGROUND_PROVIDERS: readonly Provider[] = PASTABLE_PROVIDERS;

/** A provider as a person reads it (`Claude Code`), in the backend's words. */
export const providerName = (p: Provider): string => PROVIDER_WORDS[p] ?? p;

/** A failure code as a person reads it (`Provider overloaded`), in the backend's words. */
export const codeName = (code: string): string => (CODE_WORDS as Record<string, string>)[code] ?? code;

/** When a piece of evidence was seen, in words (the engine's `phase`). */
export const PHASE_WORDS: Record<Phase, string> = {
  spawn: "When the agent was starting",
  connect: "While connecting to the provider",
  request: "While sending the request",
  stream: "While the answer streamed",
  exit: "When the agent exited",
};

export const CLASS_WORDS: Record<Class, { label: string; meaning: string }> = {
  transient: {
    label: CLASS_LABEL.transient,
    meaning: "Temporary: a network hiccup, an overloaded service or a short throttle. Retrying soon usually works.",
  },
  hard: {
    label: CLASS_LABEL.hard,
    meaning: "Needs a longer reset or a person: a quota or usage window, credentials or configuration.",
  },
  unclassified: {
    label: CLASS_LABEL.unclassified,
    meaning:
      "Unknown, low confidence or outside provider recovery (e.g. a failed task). Recovered by hand, unless a candidate opted in to moving on after identical repeats.",
  },
};

/** A rule's confidence as a sentence: whether automatic recovery acts on what it matches (the engine's `class_at`). */
export const CONFIDENCE_WORDS: Record<Confidence, string> = {
  high: "High confidence: sure of what it matches, so automatic recovery acts on it.",
  medium: "Medium confidence: sure enough of what it matches for automatic recovery to act on it.",
  low: "Low confidence: the code is kept, but the failure is treated as unclassified.",
};

/** The title of the rule `id` in words (its description, as a sentence), or null when it is not listed. */
export function ruleTitle(rules: readonly RuleView[], id: string): string | null {
  const rule = rules.find((r) => r.id === id);
  return rule ? sentence(rule.description) : null;
}

export const OUTCOME_WORDS: Record<MatchOutcome, { label: string; meaning: string }> = {
  selected: { label: "Selected", meaning: "This rule decided the result." },
  wrapped: {
    label: "Wrapped",
    meaning:
      "An envelope around a more specific cause (like “exceeded retry limit” or a bare status); dropped because a cause matched inside it.",
  },
  outranked: {
    label: "Outranked",
    meaning:
      "Lost to a rule with higher priority, to a structured match at equal priority, or to a rule listed earlier in the catalogue.",
  },
  conflicting: {
    label: "Conflicting",
    meaning:
      "Tied at equal priority with a rule of a different class, so no rule was selected and the result is unclassified.",
  },
};

export const HINT_SOURCE_WORDS: Record<HintSource, string> = {
  retry_after_header: "the retry-after header (seconds)",
  http_date: "the retry-after header (HTTP date)",
  retry_after_ms_header: "the retry-after-ms header",
  anthropic_reset_header: "an anthropic-ratelimit-*-reset header",
  rate_limit_reset_header: "an x-ratelimit-reset-* header",
  epoch_suffix: "an epoch time after “limit reached|”",
  epoch_field: "a resets_at epoch field",
  rfc3339: "a timestamp after a reset/retry keyword",
  clock_time_zone: "a clock time with a named time zone",
  clock_time_local: "a clock time, read in this machine's time zone",
  retry_delay_field: "a retryDelay field",
  resets_in_field: "a resets_in_seconds field",
  relative: "a relative delay in the text (“try again in …”)",
};

/** Whether evidence from `provider` is matched against `rule`: the backend's `Rule::applies_to`. */
export function ruleAppliesTo(rule: RuleView, provider: Provider): boolean {
  const everyRule: readonly Provider[] = PROVIDERS_SEEING_EVERY_RULE;
  return everyRule.includes(provider) || rule.providers.length === 0 || rule.providers.includes(provider);
}

export type RuleFilter = { query: string; cls: Class | "all"; provider: Provider | "all" };

export function filterRules(rules: RuleView[], f: RuleFilter): RuleView[] {
  const q = f.query.trim().toLowerCase();
  return rules.filter(
    (r) =>
      (f.cls === "all" || r.class === f.cls) &&
      (f.provider === "all" || ruleAppliesTo(r, f.provider)) &&
      (q === "" || r.id.toLowerCase().includes(q) || r.description.toLowerCase().includes(q) || r.code.includes(q)),
  );
}

export type HeaderParse = { headers: Record<string, string>; error: string | null };

/** Parses one `name: value` header per line; blank lines are skipped. */
export function parseHeaders(text: string): HeaderParse {
  const headers: Record<string, string> = {};
  const firstLine: Record<string, number> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const n = i + 1;
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon < 0) return { headers, error: `Line ${n}: expected “name: value” but found no colon.` };
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "") return { headers, error: `Line ${n}: the header name before the colon is empty.` };
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) {
      return { headers, error: `Line ${n}: “${name}” is not a valid header name (letters, digits and - only).` };
    }
    if (name in firstLine)
      return { headers, error: `Line ${n}: header “${name}” was already given on line ${firstLine[name]}.` };
    firstLine[name] = n;
    headers[name] = value;
  }
  return { headers, error: null };
}

/** Reads the optional HTTP status field as a whole number; the backend
 * decides which numbers are statuses. */
export function parseStatus(text: string): { value: number | null; error: string | null } {
  const t = text.trim();
  if (t === "") return { value: null, error: null };
  if (!/^\d{1,5}$/.test(t)) return { value: null, error: "HTTP status must be a whole number such as 429." };
  return { value: Number(t), error: null };
}

/** Converts UTF-8 byte offsets into string (UTF-16) indices of `text`. */
export function byteIndexer(text: string): (byte: number) => number {
  const bytes = new TextEncoder().encode(text);
  const decoder = new TextDecoder();
  return (byte) => decoder.decode(bytes.subarray(0, Math.max(0, Math.min(byte, bytes.length)))).length;
}

/** The text a byte span covers. */
export function spanText(text: string, span: Span): string {
  const at = byteIndexer(text);
  return text.slice(at(span.start), at(span.end));
}

export type Mark = "match" | "hint";
export type Segment = { text: string; marks: Mark[] };

/** Splits `text` into runs, each tagged with the marked byte spans covering it. */
export function segments(text: string, spans: { span: Span; mark: Mark }[]): Segment[] {
  const at = byteIndexer(text);
  const ranges = spans
    .map(({ span, mark }) => ({ from: at(span.start), to: at(span.end), mark }))
    .filter((r) => r.to > r.from);
  const cuts = [...new Set([0, text.length, ...ranges.flatMap((r) => [r.from, r.to])])].sort((a, b) => a - b);
  const out: Segment[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const [from, to] = [cuts[i], cuts[i + 1]];
    const marks = ranges.filter((r) => r.from <= from && r.to >= to).map((r) => r.mark);
    out.push({ text: text.slice(from, to), marks });
  }
  return out;
}

/** Plain words for a rule's scope: who has to change for the failure to go away. */
export const SCOPE_WORDS: Record<Scope, string> = {
  network: "Network",
  provider: "Provider service",
  model: "Model",
  account: "Account or plan",
  out_of_scope: "Outside provider recovery",
  unknown: "Unknown",
};

/** "any provider" or the list of providers a rule understands. */
export function providerWords(providers: readonly Provider[]): string {
  return providers.length === 0 ? "any provider" : providers.map(providerName).join(", ");
}
