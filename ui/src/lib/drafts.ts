// Editable copies of a profile's candidates, and the conversions between
// them and what the backend stores and accepts.
import type {
  Access,
  AgentKind,
  AgentKindInfo,
  AgentSpec,
  Candidate,
  CandidateInput,
  CandidatePolicy,
  SimStep,
} from "./types";

export type DraftCandidate = {
  /** Stable client-side key for keyed lists (ids are null until saved). */
  key: string;
  id: number | null;
  name: string;
  enabled: boolean;
  kind: AgentKind;
  /** Null: a candidate saved before access levels (the CLI's own default). */
  access: Access | null;
  program: string;
  model: string;
  /** One row per argument, passed to the program exactly as typed (spaces and quotes included). */
  args: DraftArg[];
  script: SimStep[];
  /** Simulated only: the CLI whose words its failures are in. */
  simulates: AgentKind | null;
  /** Seconds, as the backend stores them; the editor shows them with units. */
  timeouts: { idle_s: number; total_s: number };
  env: DraftVariable[];
  configDir: string;
  /** The account label; blank: derived from kind, config dir and credentials. */
  account: string;
  /** Most agents of its account at once; null: no limit. */
  maxConcurrent: number | null;
  /** What a continuation sends when it resumes the agent's session; empty: the default message. */
  continueMessage: string;
  policy: CandidatePolicy;
};

/** One environment variable row; `key` is for keyed lists only. */
export type DraftVariable = { key: string; name: string; value: string };

/** One argument row; `key` is for keyed lists only. */
export type DraftArg = { key: string; value: string };

/** Deep copy that also works on Svelte state proxies (structuredClone does not). */
export function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

let counter = 0;
const nextKey = () => `c${++counter}`;

export function draftOf(c: Candidate): DraftCandidate {
  return draftFrom(c.id, c.name, c.enabled, c.agent, c.policy);
}

function draftFrom(
  id: number | null,
  name: string,
  enabled: boolean,
  agent: Candidate["agent"],
  policy: CandidatePolicy,
): DraftCandidate {
  return {
    key: nextKey(),
    id,
    name,
    enabled,
    kind: agent.kind,
    access: agent.access ?? null,
    program: agent.program ?? "",
    model: agent.model ?? "",
    args: agent.args.map((value) => ({ key: nextKey(), value })),
    script: clone(agent.script),
    simulates: agent.simulates ?? null,
    timeouts: { ...agent.timeouts },
    env: Object.entries(agent.env ?? {}).map(([name, value]) => ({ key: nextKey(), name, value: value ?? "" })),
    configDir: agent.config_dir ?? "",
    account: agent.account ?? "",
    maxConcurrent: agent.max_concurrent ?? null,
    continueMessage: agent.continue_message ?? "",
    policy: clone(policy),
  };
}

/** The agent settings as the backend accepts them. */
export function agentOf(d: DraftCandidate): AgentSpec {
  return {
    kind: d.kind,
    access: d.access,
    program: d.program.trim() || null,
    // Each row is one argument as typed; only a row left empty is dropped.
    args: d.args.map((a) => a.value).filter((a) => a !== ""),
    model: d.model.trim() || null,
    script: d.script,
    simulates: d.simulates,
    env: Object.fromEntries(
      d.env.filter((v) => v.name.trim() !== "" || v.value !== "").map((v) => [v.name.trim(), v.value]),
    ),
    config_dir: d.configDir.trim() || null,
    timeouts: { ...d.timeouts },
    account: d.account.trim() || null,
    max_concurrent: d.maxConcurrent,
    // Kept as typed; a blank one is no message of its own.
    continue_message: d.continueMessage.trim() === "" ? null : d.continueMessage,
  };
}

/** A new, empty variable row. */
export function newVariable(): DraftVariable {
  return { key: nextKey(), name: "", value: "" };
}

/** A new, empty argument row. */
export function newArg(): DraftArg {
  return { key: nextKey(), value: "" };
}

export function inputOf(d: DraftCandidate): CandidateInput {
  return {
    id: d.id,
    name: d.name.trim(),
    enabled: d.enabled,
    agent: agentOf(d),
    policy: d.policy,
  };
}

/** Scripts a simulated candidate can play, for demos and trying policies. */
export const SIM_SCRIPTS: { label: string; steps: SimStep[] }[] = [
  {
    label: "529 overloaded twice, then succeed",
    steps: [
      { outcome: "overloaded", after_ms: 800 },
      { outcome: "overloaded", after_ms: 800 },
      { outcome: "succeed", after_ms: 1500 },
    ],
  },
  {
    label: "Usage limit that resets in 40 s, then succeed",
    steps: [
      { outcome: "usage_limit", after_ms: 800, resets_in_s: 40 },
      { outcome: "succeed", after_ms: 1500 },
    ],
  },
  {
    label: "429 with retry-after 12 s, then succeed",
    steps: [
      { outcome: "rate_limited", after_ms: 800, retry_after_s: 12 },
      { outcome: "succeed", after_ms: 1500 },
    ],
  },
  { label: "A tool ran, then the connection reset", steps: [{ outcome: "tool_then_reset", after_ms: 1200 }] },
  {
    label: "An error no rule knows",
    steps: [{ outcome: "unrecognised", after_ms: 800, message: "segfault in the flux capacitor" }],
  },
  { label: "Always succeed", steps: [{ outcome: "succeed", after_ms: 1500 }] },
];

/** A new candidate of `kind`, as the backend's template for that kind starts one. */
export function newDraft(kind: AgentKindInfo, taken: string[]): DraftCandidate {
  let name = kind.label;
  for (let n = 2; taken.includes(name); n++) name = `${kind.label} ${n}`;
  const draft = draftFrom(null, name, true, kind.starter.agent, kind.starter.policy);
  // A kind that runs no program of its own starts with none: its starter's
  // is a stand-in that keeps a document written from the command line
  // valid, not a program to run. The field asks for it instead.
  if (kind.default_program === null && !kind.scripted) draft.program = "";
  return draft;
}

/** Why a move button is greyed out: the editor shows these above the list, and each such button points at its own. */
export const ORDER_WHY = {
  first: "The first candidate cannot move up: it is tried first.",
  last: "The last candidate cannot move down: it is tried last.",
} as const;

/** Compares drafts by what would be saved, not by client keys. */
export function sameDrafts(a: DraftCandidate[], b: DraftCandidate[]): boolean {
  return JSON.stringify(a.map(inputOf)) === JSON.stringify(b.map(inputOf));
}

export function scriptLabel(steps: SimStep[]): string {
  const known = SIM_SCRIPTS.find((s) => JSON.stringify(s.steps) === JSON.stringify(steps));
  if (known) return known.label;
  return steps.map((s) => s.outcome.replaceAll("_", " ")).join(" → ");
}
