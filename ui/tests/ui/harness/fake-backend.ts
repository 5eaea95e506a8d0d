// An in-memory stand-in for the Rust backend, shaped by the generated
// bindings. It keeps just enough state for UI behaviour tests: profiles,
// routes with generations (stale actions are refused like the engine does),
// and canned catalogue answers. Policy limits are the backend's own, from
// the bindings; texts the backend writes (schedules, previews) come back
// marked as the fake's, so a test sees whether the UI shows them as given.
import { MANUAL_ACTIONS, POLICY_LIMITS, ROUTE_FILTER_STATES } from "../../../src/bindings";
import type {
  AccountsOverview,
  ActionRequest,
  AgentKindInfo,
  AttemptTranscript,
  AgentSpec,
  CandidateInput,
  CandidatePolicy,
  CatalogueView,
  ClassPolicy,
  ContinuationPreview,
  EngineStatus,
  FieldError,
  ImportPreview,
  InboxItem,
  IpcError,
  PlaygroundResult,
  PreviewStep,
  Readiness,
  Profile,
  RuleDraft,
  RuleProposal,
  RuleReview,
  SavedRule,
  RouteDetail,
  RouteFilter,
  RouteSnapshot,
  Settings,
  StartRun,
  UnclassifiedPolicy,
  WorkdirCheck,
} from "../../../src/lib/types";
import type { RouteQuery_Deserialize as RouteQuery, RoutePage_Serialize as RoutePage } from "../../../src/bindings";
import agentKinds from "./agent-kinds.json";
import { exactDuration } from "../../../src/lib/format";

/**
 * Why each action a snapshot does not offer is not possible, as the engine's
 * `machine::unavailable` answers; marked as the fake's (the real words are
 * the Rust tests'), so a test sees the window shows what it was given.
 */
function unavailable(s: Pick<RouteSnapshot, "actions" | "state">): RouteSnapshot["unavailable"] {
  return MANUAL_ACTIONS.filter((a) => !s.actions.includes(a)).map((action) => ({
    action,
    why: `[backend] not possible while the route is ${s.state}`,
  }));
}

/** The routes each list filter keeps: the engine's `RouteFilter::states` (none: every state), archived ones apart. */
const keeps = (f: RouteFilter, s: RouteSnapshot) => {
  const states: readonly RouteSnapshot["state"][] = ROUTE_FILTER_STATES[f];
  return (s.archived_at !== null) === (f === "archived") && (states.length === 0 || states.includes(s.state));
};

export type Scenario = {
  profiles?: Profile[];
  routes?: RouteDetail[];
  rules?: CatalogueView;
  inbox?: InboxItem[];
  /** What `propose_rule` answers. */
  proposal?: RuleProposal;
  /** What `review_rule` answers for a draft whose pattern is `pattern`
   * (any other draft gets a clean review). Changed fixtures not among the
   * confirmed names are refused, as the backend does. */
  reviews?: { pattern: string; review: RuleReview }[];
  playground?: PlaygroundResult;
  /** What `classify_text` answers once a local rule has been saved. */
  playgroundAfterSave?: PlaygroundResult;
  preview?: PreviewStep[];
  /** What the preview says after its last step when it was cut short. */
  previewCut?: string;
  /** What `attempt_transcript` answers, by `route/attempt`. */
  transcripts?: Record<string, AttemptTranscript>;
  /** What `readiness` answers. */
  readiness?: Readiness;
  /** What `readiness` answers for an agent by its program (or, with none set, its kind), before `readiness`. */
  readinessOf?: Record<string, Readiness>;
  /** The path the native save / open dialog returns; null: cancelled. */
  savePath?: string | null;
  openPath?: string | null;
  /** What `preview_profile_file` answers. */
  importPreview?: ImportPreview;
  /** What `preview_profile_file` refuses with instead (a file that is no profile). */
  importRefused?: { message: string; fields: { path: string; message: string }[] };
  /** The profile `import_profile` saves (its id decides new or replaced). */
  imported?: Profile;
  /** Variable names `secret_env` calls secret when their value is not
   * empty (default: OPENAI_API_KEY); a value that is a keyring reference
   * (`recourse-keyring:` and 32 hex digits) is always secret. */
  secretEnv?: string[];
  /** `secret_env` says a keyring is running (default: none is). */
  keyringRunning?: boolean;
  /** `secret_env` never answers. */
  secretEnvPending?: boolean;
  /** What `check_agent` answers, by field path. */
  agentErrors?: FieldError[];
  /**
   * The next call of a command fails with this error; a string is what
   * Tauri itself rejects a malformed request with.
   */
  failNext?: Record<string, IpcError | string>;
  /** Milliseconds these commands take to answer (what a busy backend does). */
  slow?: Record<string, number>;
  /** Start at login as the autostart plugin reports it (off by default). */
  autostart?: boolean;
  /** New dispatches paused at start. */
  paused?: boolean;
  /** The remembered answer to the close question. */
  closeChoice?: "keep_running" | "quit" | null;
  /** What `engine_status` answers (ready by default); a test emits `engine-status` to change it. */
  engineStatus?: EngineStatus;
  /** What `inspect_workdir` answers, by the path asked (null: the field was empty). */
  workdirs?: Record<string, WorkdirCheck>;
  /** Where `app_info` says the database and logs are (/tmp/test.db, /tmp/logs otherwise). */
  appInfo?: { db_path?: string; log_dir?: string };
  /** The app's settings (defaults otherwise). */
  settings?: Partial<Settings>;
  /** What `accounts` answers; `clear_account` removes an account's marks and makes it ready. */
  accounts?: AccountsOverview;
  /** What `continuation_preview` answers, by route id (default: neither is possible). */
  continuations?: Record<number, ContinuationPreview>;
};

const NOW = () => new Date().toISOString();

export function immediate(on_exhausted: "skip" | "stop"): ClassPolicy {
  return {
    wait_for_reset: { enabled: false, max_wait_seconds: 0 },
    retry: { enabled: false, max_retries: 0, initial_interval_seconds: 0 },
    on_exhausted,
  };
}

/** What the real backend's `agent_kinds` answers, written by its own test. */
export const AGENT_KINDS = agentKinds as AgentKindInfo[];

function checkSection(prefix: string, s: ClassPolicy): FieldError[] {
  const errors: FieldError[] = [];
  const range = (path: string, v: number, { min, max }: { min: number; max: number }) => {
    if (v < min || v > max)
      errors.push({
        path: `${prefix}.${path}`,
        message: `must be ${min}–${max} when enabled (${v} is too ${v < min ? "few" : "many"})`,
      });
  };
  // Durations are refused in durations, as `timing::words::outside` says them.
  const duration = (path: string, v: number, { min, max }: { min: number; max: number }) => {
    if (v < min || v > max)
      errors.push({
        path: `${prefix}.${path}`,
        message:
          v < min
            ? `must be at least ${exactDuration(min)} (${exactDuration(v)} is too short)`
            : `must be at most ${exactDuration(max)} (${exactDuration(v)} is too long)`,
      });
  };
  if (s.retry.enabled) {
    range("retry.max_retries", s.retry.max_retries, POLICY_LIMITS.max_retries);
    duration(
      "retry.initial_interval_seconds",
      s.retry.initial_interval_seconds,
      POLICY_LIMITS.initial_interval_seconds,
    );
  }
  // As the backend's `check_longest_delay`: only once both fields are in range.
  const { max_retries: n, initial_interval_seconds: first } = s.retry;
  const longest = first * 2 ** (n - 1);
  if (s.retry.enabled && errors.length === 0 && longest > 86_400)
    errors.push({
      path: `${prefix}.retry`,
      message: `the last retry would wait ${exactDuration(longest)} (the first delay, ${exactDuration(first)}, doubled ${n - 1} times), longer than the 1 d limit; use fewer retries or a shorter first delay`,
    });
  if (s.wait_for_reset.enabled) {
    duration("wait_for_reset.max_wait_seconds", s.wait_for_reset.max_wait_seconds, POLICY_LIMITS.max_wait_seconds);
  }
  if (s.auto_continue?.enabled) {
    range("auto_continue.max_continuations", s.auto_continue.max_continuations, POLICY_LIMITS.max_continuations);
  }
  return errors;
}

/** The fake's words for a section's automatic continuation, when it is on. */
const continues = (s: ClassPolicy) =>
  s.auto_continue?.enabled ? `; continues ≤ ${s.auto_continue.max_continuations}×` : "";

/** What the fake says for `describe_schedule`: the arguments, so a test can
 * tell the UI sent the current draft and shows the answer as it came. */
function fakeSchedule(section: ClassPolicy, next: string | null): string {
  const retry = section.retry.enabled
    ? `${section.retry.max_retries}× from ${section.retry.initial_interval_seconds} s`
    : "no retry";
  // As long as the real sentence automatic continuation adds, so a test sees its lines.
  const sentence = section.auto_continue?.enabled
    ? ". After a failure that follows work, when every tool the agent ran completed, continue its own session instead of asking you; the prompt is never sent again."
    : "";
  // As long as the real sentence a reset wait adds (it comes first).
  const wait = section.wait_for_reset.enabled
    ? `If the provider gives a trusted reset within ${section.wait_for_reset.max_wait_seconds} s, wait for it and try once more. `
    : "";
  return `${wait}[backend schedule] ${retry}, then ${section.on_exhausted} to ${next ?? "nobody"}${continues(section)}${sentence}`;
}

/** What the fake says for `policy_summary`: the arguments, so a test can
 * tell what the UI sent. */
function policyWords(p: CandidatePolicy): string {
  const one = (s: ClassPolicy) =>
    `${s.wait_for_reset.enabled ? `wait ≤ ${s.wait_for_reset.max_wait_seconds} s, ` : ""}` +
    `${s.retry.enabled ? `${s.retry.max_retries}× from ${s.retry.initial_interval_seconds} s, ` : ""}${s.on_exhausted}` +
    continues(s);
  const repeated = p.unclassified.repeated_failure;
  const unclassified = repeated.enabled ? `; unclassified skip after ${repeated.threshold}` : "";
  return `transient ${one(p.transient)}; hard ${one(p.hard)}${unclassified}`;
}

/** The validator's rule that a generic candidate names its program. */
function checkProgram(index: number, agent: AgentSpec): FieldError[] {
  return agent.kind === "generic" && !agent.program?.trim()
    ? [
        {
          path: `candidates[${index}].agent.program`,
          message: "Any command needs a program: write a command on PATH, or its path",
        },
      ]
    : [];
}

/** The backend's whole-list check: every row's checks plus the names. */
function checkCandidates(inputs: CandidateInput[]): FieldError[] {
  const first = new Map<string, number>();
  // As `policy::validate` refuses an empty list.
  const empty: FieldError[] =
    inputs.length === 0 ? [{ path: "candidates", message: "must list at least one candidate" }] : [];
  return [
    ...empty,
    ...inputs.flatMap((c, i) => {
      const path = `candidates[${i}].name`;
      const name: FieldError[] = [];
      if (!c.name.trim()) name.push({ path, message: "must not be empty" });
      else if (first.has(c.name))
        name.push({ path, message: `duplicate candidate name "${c.name}" (also candidates[${first.get(c.name)}])` });
      else first.set(c.name, i);
      return [...name, ...checkPolicy(i, c.policy), ...checkProgram(i, c.agent)];
    }),
  ];
}

export function checkPolicy(index: number, p: CandidatePolicy): FieldError[] {
  const repeated = p.unclassified.repeated_failure;
  const { min, max } = POLICY_LIMITS.repeat_threshold;
  const threshold: FieldError[] =
    repeated.enabled && (repeated.threshold < min || repeated.threshold > max)
      ? [
          {
            path: `candidates[${index}].unclassified.repeated_failure.threshold`,
            message: `must be ${min}–${max} identical failures when enabled (${repeated.threshold} is too ${repeated.threshold < min ? "few" : "many"})`,
          },
        ]
      : [];
  return [
    ...checkSection(`candidates[${index}].transient`, p.transient),
    ...checkSection(`candidates[${index}].hard`, p.hard),
    ...threshold,
  ];
}

export class FakeBackend {
  profiles: Profile[];
  routes: RouteDetail[];
  accounts: AccountsOverview;
  autostart: boolean;
  paused: boolean;
  closeChoice: "keep_running" | "quit" | null;
  /** What `answer_close` was told, in order. */
  closeAnswers: { choice: string; remember: boolean }[] = [];
  /** What `set_unsaved_edits` was told, in order. */
  unsavedReports: (string | null)[] = [];
  settings: Settings;
  /** Local rules saved so far. */
  rulesSaved = 0;
  private nextId = 100;

  constructor(private scenario: Scenario) {
    this.profiles = structuredClone(scenario.profiles ?? []);
    // Fields a scenario leaves out take the backend's empty values.
    this.routes = structuredClone(scenario.routes ?? []).map((r) => ({
      ...r,
      snapshot: {
        ...r.snapshot,
        cwd: r.snapshot.cwd === undefined ? "/home/me/project" : r.snapshot.cwd,
        archived_at: r.snapshot.archived_at ?? null,
        provider_reset_at: r.snapshot.provider_reset_at ?? null,
        cannot_start: r.snapshot.cannot_start ?? false,
        unavailable: r.snapshot.unavailable ?? unavailable(r.snapshot),
      },
      attempts: r.attempts.map((a) => ({ ...a, exit_code: a.exit_code ?? null, in_inbox: a.in_inbox ?? false })),
      timeline: r.timeline ?? [],
      prompt: r.prompt ?? r.snapshot.prompt_excerpt,
      profile_id: r.profile_id ?? null,
      holds: r.holds ?? [],
      manual_actions: r.manual_actions ?? [],
    }));
    this.accounts = structuredClone(scenario.accounts ?? { accounts: [], max_running: null, running: 0, at: NOW() });
    this.autostart = scenario.autostart ?? false;
    this.paused = scenario.paused ?? false;
    this.closeChoice = scenario.closeChoice ?? null;
    this.settings = {
      close_while_active: null,
      default_profile: null,
      default_cwd: null,
      notify: { needs_you: true, succeeded: false, waiting: false },
      retention: { details_days: null, routes_days: null },
      ...scenario.settings,
    };
  }

  handle(cmd: string, args: Record<string, unknown>): unknown {
    const fail = this.scenario.failNext?.[cmd];
    if (fail) {
      delete this.scenario.failNext![cmd];
      throw fail;
    }
    switch (cmd) {
      case "plugin:autostart|is_enabled":
        return this.autostart;
      case "plugin:autostart|enable":
        this.autostart = true;
        return null;
      case "plugin:autostart|disable":
        this.autostart = false;
        return null;
      case "engine_status":
        return this.scenario.engineStatus ?? { state: "ready" };
      case "dispatch_paused":
        return this.paused;
      case "set_dispatch_paused":
        this.paused = Boolean(args.paused);
        return this.paused;
      case "get_settings":
        return { ...this.settings, close_while_active: this.closeChoice };
      case "set_close_choice":
        this.closeChoice = (args.choice as "keep_running" | "quit" | null) ?? null;
        return { ...this.settings, close_while_active: this.closeChoice };
      case "set_settings":
        return this.saveSettings(args.settings as Settings);
      case "open_folder":
        return null;
      case "plugin:window|set_theme":
        return null;
      case "inspect_workdir": {
        const path = (args.path as string | null) ?? "";
        const known = this.scenario.workdirs?.[path];
        if (known) return known;
        return {
          path: path === "" ? "/home/me" : path,
          problem: null,
          warning: null,
          git_root: path === "" ? null : path,
        } satisfies WorkdirCheck;
      }
      case "archive_route":
        return this.archive(Number(args.id), Boolean(args.archived));
      case "delete_routes":
        return this.deleteRoutes(args.ids as number[]);
      case "answer_close":
        this.closeAnswers.push({ choice: String(args.choice), remember: Boolean(args.remember) });
        if (args.remember) this.closeChoice = args.choice as "keep_running" | "quit";
        return null;
      case "set_unsaved_edits":
        this.unsavedReports.push((args.profile as string | null) ?? null);
        return null;
      case "app_info":
        return { version: "0.0.0-test", db_path: "/tmp/test.db", log_dir: "/tmp/logs", ...this.scenario.appInfo };
      case "agent_kinds":
        return AGENT_KINDS;
      case "list_profiles":
        return this.profiles;
      case "create_profile":
        return this.createProfile(String(args.name));
      case "rename_profile":
        return this.renameProfile(Number(args.id), String(args.name));
      case "delete_profile":
        this.profiles = this.profiles.filter((p) => p.id !== Number(args.id));
        return null;
      case "save_candidates":
        return this.saveCandidates(
          Number(args.profileId),
          Number(args.expectedRevision),
          args.candidates as CandidateInput[],
        );
      case "check_policy":
        return checkPolicy(Number(args.index), args.policy as CandidatePolicy);
      case "check_candidates":
        return checkCandidates(args.candidates as CandidateInput[]);
      case "check_agent":
        // The real validator runs in the end-to-end tests; here a scenario
        // may script its answer, plus its one program rule.
        return [
          ...checkProgram(Number(args.index), args.agent as AgentSpec),
          ...(this.scenario.agentErrors ?? []).filter((e) => e.path.startsWith(`candidates[${Number(args.index)}].`)),
        ];
      case "secret_env": {
        // The wording is the backend's (`engine::secret_places`); the
        // Rust tests check it, this replays it.
        if (this.scenario.secretEnvPending) return new Promise(() => {});
        const env = args.env as Record<string, string>;
        const secret = this.scenario.secretEnv ?? ["OPENAI_API_KEY"];
        const reference = /^recourse-keyring:[0-9a-f]{32}$/;
        return Object.keys(env)
          .filter((name) => reference.test(env[name]) || (secret.includes(name) && env[name] !== ""))
          .map((name) =>
            reference.test(env[name])
              ? { name, place: "keyring", note: "in the keyring" }
              : this.scenario.keyringRunning
                ? { name, place: "keyring_on_save", note: "goes to the keyring when you save" }
                : {
                    name,
                    place: "database_file",
                    note: "in the database file, readable only by you: no keyring is running",
                  },
          );
      }
      case "preview_policy":
        return { steps: this.scenario.preview ?? [], cut: this.scenario.previewCut ?? null };
      case "preview_error_text":
        // The real catalogue runs in the Rust tests; here the answer names
        // what it was asked, so a test can tell what the UI sent.
        return {
          classification: {
            code: "provider_overloaded",
            class: "transient",
            confidence: "high",
            scope: "provider",
            rule_id: "fake.rule.v1",
            catalogue_version: "test",
            retry_after_s: null,
            reset_at: null,
            matched: null,
            explanation: `[backend] ${String(args.provider)}: ${String(args.text)}`,
          },
          preview: { steps: this.scenario.preview ?? [], cut: this.scenario.previewCut ?? null },
        };
      case "describe_schedule":
        return fakeSchedule(args.section as ClassPolicy, (args.next as string | null) ?? null);
      case "describe_unclassified": {
        // The real words are the Rust tests'; here the arguments, marked.
        const repeated = (args.section as UnclassifiedPolicy).repeated_failure;
        const what = repeated.enabled ? `skip after ${repeated.threshold}` : "off";
        return `[backend unclassified] ${what}, to ${(args.next as string | null) ?? "nobody"}`;
      }
      case "start_run":
        return this.startRun(args.request as StartRun);
      case "route_counts":
        return this.listRoutes({ filter: "all", search: "", before: null, limit: 1 }).counts;
      case "policy_summary":
        // The real wording is the Rust tests'; here the answer is marked as
        // the fake's, so a test sees that the UI shows what it was given.
        return `[backend summary] ${policyWords(args.policy as CandidatePolicy)}`;
      case "list_routes":
        return this.listRoutes(args.query as RouteQuery);
      case "route_detail":
        return this.route(Number(args.id));
      case "attempt_transcript": {
        const found = this.scenario.transcripts?.[`${args.routeId}/${args.attempt}`];
        if (!found)
          throw {
            code: "not_found",
            message: `transcript of route/attempt ${args.routeId}/${args.attempt} does not exist`,
            fields: [],
          };
        return found;
      }
      case "readiness": {
        const agent = args.agent as AgentSpec;
        return (
          this.scenario.readinessOf?.[agent.program ?? agent.kind] ??
          this.scenario.readiness ?? {
            program: "claude",
            found: "/usr/bin/claude",
            version: "2.1.332 (Claude Code)",
            verified: "2.1.332",
            credentials: [{ name: "ANTHROPIC_API_KEY", file: false, present: true }],
            install: null,
            problems: [],
            ready: true,
          }
        );
      }
      case "route_action":
        return this.act(args.request as ActionRequest);
      case "continuation_preview":
        return (
          this.scenario.continuations?.[Number(args.routeId)] ?? {
            continue_offer: null,
            continue_refused: "attempt 1's Claude Code reported no session id, so there is no session to resume",
            handover: null,
            handover_refused: "no candidate is left to hand over to in this cycle",
          }
        );
      case "accounts":
        return structuredClone(this.accounts);
      case "clear_account":
        return this.clearAccount(String(args.account));
      case "set_max_running": {
        const max = args.max as number | null;
        if (max !== null && (max < 1 || max > 256))
          throw {
            code: "validation",
            message: `max_running: must be 1 to 256 running agents (${max} is too ${max < 1 ? "few" : "many"})`,
            fields: [
              {
                path: "max_running",
                message: `must be 1 to 256 running agents (${max} is too ${max < 1 ? "few" : "many"})`,
              },
            ],
          };
        this.accounts.max_running = max;
        return null;
      }
      case "catalogue_rules":
        return (
          this.scenario.rules ?? {
            version: "test",
            rules: [],
            local_path: "/tmp/catalogue/rules.toml",
            local_error: null,
          }
        );
      case "propose_rule":
        if (!this.scenario.proposal) throw { code: "validation", message: "no proposal in scenario", fields: [] };
        return this.scenario.proposal;
      case "review_rule":
        return this.review(args.draft as RuleDraft, args.confirmed as string[]);
      case "save_rule":
        return this.saveRule(args.draft as RuleDraft, args.confirmed as string[]);
      case "remove_local_rule": {
        const rules = this.scenario.rules;
        if (!rules?.rules.some((r) => r.id === args.id && r.origin.local))
          throw { code: "not_found", message: `local rule ${String(args.id)} does not exist`, fields: [] };
        rules.rules = rules.rules.filter((r) => r.id !== args.id);
        rules.version = `${rules.version.split("+")[0]}+local.9`;
        return rules.version;
      }
      case "classify_text":
        if (this.rulesSaved > 0 && this.scenario.playgroundAfterSave) return this.scenario.playgroundAfterSave;
        if (!this.scenario.playground)
          throw { code: "validation", message: "no playground answer in scenario", fields: [] };
        return this.scenario.playground;
      case "unclassified_inbox":
        return this.scenario.inbox ?? [];
      case "choose_path":
        return (args.request as { kind: string }).kind === "save_file"
          ? (this.scenario.savePath ?? null)
          : (this.scenario.openPath ?? null);
      case "export_profile":
        this.profile(Number(args.id));
        return null;
      case "preview_profile_file":
        if (this.scenario.importRefused) throw { code: "validation", ...this.scenario.importRefused };
        if (!this.scenario.importPreview)
          throw { code: "validation", message: "no import preview in scenario", fields: [] };
        return this.scenario.importPreview;
      case "import_profile":
        return args.copyAs ? this.importCopy(String(args.copyAs)) : this.importProfile();
      case "duplicate_profile":
        return this.duplicateProfile(Number(args.id), String(args.name));
      case "export_fixture":
        return {
          path: `/tmp/fixtures/unclassified-route${args.routeId}-attempt${args.attempt}.toml`,
          text: 'description = "exported"\n',
        };
      default:
        throw { code: "not_found", message: `fake backend has no command ${cmd}`, fields: [] };
    }
  }

  private review(draft: RuleDraft, confirmed: string[]): RuleReview {
    const given = this.scenario.reviews?.find((r) => r.pattern === draft.pattern)?.review;
    const review: RuleReview = structuredClone(given) ?? {
      rule_id: draft.id,
      checks: { impact: [], samples_checked: 0, changed_fixtures: [], fixtures_checked: 340, broadness: [] },
      refusals: [],
    };
    for (const change of review.checks?.changed_fixtures ?? []) {
      if (!confirmed.includes(change.name))
        review.refusals.push({
          path: "confirmed_fixtures",
          message: `fixture ${change.name} changes: confirm it by name to save anyway`,
        });
    }
    return review;
  }

  private saveRule(draft: RuleDraft, confirmed: string[]): SavedRule {
    const refusals = this.review(draft, confirmed).refusals;
    if (refusals.length > 0)
      throw { code: "validation", message: refusals.map((f) => f.message).join("; "), fields: refusals };
    this.rulesSaved += 1;
    const rules = this.scenario.rules ?? { version: "test", rules: [], local_path: "", local_error: null };
    rules.version = `${rules.version.split("+")[0]}+local.1`;
    rules.rules.push({
      id: draft.id,
      description: draft.description,
      priority: draft.priority,
      providers: draft.providers,
      code: draft.code,
      class: "transient",
      confidence: "medium",
      scope: "provider",
      wrapper: false,
      patterns: [draft.pattern],
      fixtures: [`local/${draft.id.replaceAll(".", "-")}-1.toml`],
      origin: { local: true, overrides: draft.overrides ?? null, reviewed: true },
    });
    this.scenario.rules = rules;
    return {
      rule_id: draft.id,
      catalogue_version: rules.version,
      rules_path: "/tmp/catalogue/rules.toml",
      fixture_path: `/tmp/catalogue/fixtures/${draft.id.replaceAll(".", "-")}-1.toml`,
    };
  }

  private profile(id: number): Profile {
    const p = this.profiles.find((x) => x.id === id);
    if (!p) throw { code: "not_found", message: `profile ${id} does not exist`, fields: [] };
    return p;
  }

  /** The imported profile saved under a new name, beside the one of its own name. */
  private importCopy(name: string): Profile {
    const source = structuredClone(this.scenario.imported);
    if (!source) throw { code: "validation", message: "no imported profile in scenario", fields: [] };
    const copy = { ...source, id: this.nextId++, name, revision: 1 };
    this.profiles = [...this.profiles, copy];
    return copy;
  }

  private importProfile(): Profile {
    const saved = structuredClone(this.scenario.imported);
    if (!saved) throw { code: "validation", message: "no imported profile in scenario", fields: [] };
    const known = this.profiles.some((p) => p.id === saved.id);
    this.profiles = known ? this.profiles.map((p) => (p.id === saved.id ? saved : p)) : [...this.profiles, saved];
    return saved;
  }

  private duplicateProfile(id: number, name: string): Profile {
    const copy = { ...structuredClone(this.profile(id)), id: this.nextId++, name, revision: 1 };
    this.profiles = [...this.profiles, copy];
    return copy;
  }

  private createProfile(name: string): Profile {
    if (!name.trim())
      throw {
        code: "validation",
        message: "name: must not be empty",
        fields: [{ path: "name", message: "must not be empty" }],
      };
    this.nameFree(name, null);
    const p: Profile = { id: this.nextId++, name, revision: 1, candidates: [], created_at: NOW(), updated_at: NOW() };
    this.profiles.push(p);
    return p;
  }

  private renameProfile(id: number, name: string): Profile {
    if (!name.trim())
      throw {
        code: "validation",
        message: "name: must not be empty",
        fields: [{ path: "name", message: "must not be empty" }],
      };
    this.nameFree(name, id);
    const p = this.profile(id);
    p.name = name;
    return p;
  }

  /** Refuses a name another profile has, in the engine's words (`EngineError::Conflict`). */
  private nameFree(name: string, except: number | null) {
    if (this.profiles.some((p) => p.name === name && p.id !== except))
      throw { code: "conflict", message: `a profile named “${name}” already exists`, fields: [] };
  }

  private saveCandidates(id: number, revision: number, inputs: CandidateInput[]): Profile {
    const p = this.profile(id);
    if (p.revision !== revision)
      throw { code: "conflict", message: "the profile changed since it was loaded; reload it", fields: [] };
    const errors = checkCandidates(inputs);
    if (errors.length > 0)
      throw { code: "validation", message: errors.map((e) => `${e.path}: ${e.message}`).join("\n"), fields: errors };
    p.candidates = inputs.map((c) => ({
      id: c.id ?? this.nextId++,
      name: c.name,
      enabled: c.enabled,
      agent: {
        kind: c.agent.kind,
        program: c.agent.program ?? null,
        args: c.agent.args ?? [],
        model: c.agent.model ?? null,
        script: c.agent.script ?? [],
        env: c.agent.env ?? {},
        config_dir: c.agent.config_dir ?? null,
        timeouts: c.agent.timeouts ?? { idle_s: 900, total_s: 14400 },
        continue_message: c.agent.continue_message ?? null,
      },
      policy: c.policy,
      policy_revision: 1,
    }));
    p.revision += 1;
    p.updated_at = NOW();
    return p;
  }

  private startRun(req: StartRun): RouteSnapshot {
    const p = this.profile(req.profile_id);
    const first = p.candidates.find((c) => c.enabled);
    if (!first)
      throw {
        code: "validation",
        message: "profile_id: profile has no enabled candidate",
        fields: [{ path: "profile_id", message: "profile has no enabled candidate" }],
      };
    const id = this.nextId++;
    const snapshot: RouteSnapshot = {
      id,
      profile_name: p.name,
      state: "running",
      generation: 1,
      candidate_index: 0,
      candidate_name: first.name,
      candidate_count: p.candidates.length,
      last_failure: null,
      retry: null,
      pending_outcome: null,
      skip_to: p.candidates.filter((c) => c.enabled)[1]?.name ?? null,
      repeat_risk: null,
      deadline: null,
      provider_reset_at: null,
      manual_reason: null,
      cannot_start: false,
      prompt_excerpt: req.prompt.slice(0, 120),
      cwd: req.cwd ?? "/home/me",
      archived_at: null,
      attempts: 1,
      owner: "test",
      created_at: NOW(),
      updated_at: NOW(),
      actions: ["stop"],
      unavailable: unavailable({ actions: ["stop"], state: "running" }),
    };
    this.routes.unshift({
      snapshot,
      attempts: [],
      timeline: [],
      prompt: req.prompt,
      profile_id: p.id,
      holds: [],
      manual_actions: [],
    });
    return snapshot;
  }

  /** Removes an account's marks, as the engine does; an unknown one is `not_found`. */
  private clearAccount(id: string): number {
    const a = this.accounts.accounts.find((x) => x.id === id || x.name === id);
    if (!a) throw { code: "not_found", message: `account ${JSON.stringify(id)} does not exist`, fields: [] };
    const cleared = a.marks.length;
    a.marks = [];
    a.status = { kind: "ready" };
    return cleared;
  }

  /** The store's paged query: filter, search (id, profile, prompt; case ignored), newest id first. */
  private listRoutes(q: RouteQuery): RoutePage {
    const text = q.search.trim().toLowerCase();
    const id = Number(text.replace(/^#/, ""));
    const matching = this.routes
      .map((r) => r.snapshot)
      .filter((s) => keeps(q.filter, s))
      .filter(
        (s) =>
          text === "" ||
          s.id === id ||
          s.profile_name.toLowerCase().includes(text) ||
          s.prompt_excerpt.toLowerCase().includes(text),
      )
      .filter((s) => q.before == null || s.id < q.before)
      .sort((a, b) => b.id - a.id);
    const count = (f: RouteFilter) => this.routes.filter((r) => keeps(f, r.snapshot)).length;
    const active = count("active");
    const waiting = this.routes.filter(
      (r) => r.snapshot.archived_at === null && ["waiting_reset", "retry_scheduled"].includes(r.snapshot.state),
    ).length;
    return {
      routes: matching.slice(0, q.limit),
      more: matching.length > q.limit,
      counts: {
        needs_you: count("needs_you"),
        active,
        running: active - waiting,
        waiting,
        stopped: count("stopped"),
        finished: count("finished"),
        archived: count("archived"),
        all: count("all"),
      },
    };
  }

  /** The stored route, to change. */
  private stored(id: number): RouteDetail {
    const r = this.routes.find((x) => x.snapshot.id === id);
    if (!r) throw { code: "not_found", message: `route ${id} does not exist`, fields: [] };
    return r;
  }

  private route(id: number): RouteDetail {
    const r = this.stored(id);
    // Fields a scenario may leave out take the backend's "nothing" values.
    return {
      totals: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: null },
      refused_notice: null,
      cwd: null,
      ...r,
      attempts: r.attempts.map((a) => ({ transcript: null, ...a })),
    };
  }

  /**
   * Commits a transition as the engine would (next generation, fresh object)
   * and returns the snapshot, ready to emit as a `route-changed` payload.
   */
  revise(id: number, patch: Partial<RouteSnapshot>, attempts?: RouteDetail["attempts"]): RouteSnapshot {
    const r = this.stored(id);
    r.snapshot = { ...r.snapshot, ...patch, generation: r.snapshot.generation + 1, updated_at: NOW() };
    if (!patch.unavailable) r.snapshot.unavailable = unavailable(r.snapshot);
    if (attempts) r.attempts = attempts;
    return r.snapshot;
  }

  /** The engine's states at rest (AT_REST): archive and delete apply there only. */
  private atRest(s: RouteSnapshot) {
    return ["needs_manual", "stopped", "succeeded"].includes(s.state);
  }

  /** The engine's refusal of housekeeping on a route that runs or waits. */
  private refuseBusy(s: RouteSnapshot, what: string) {
    if (!this.atRest(s))
      throw {
        code: "conflict",
        message: `route ${s.id} is ${s.state}: only a route that neither runs nor waits can be ${what}; stop it first`,
        fields: [],
      };
  }

  private archive(id: number, archived: boolean): RouteSnapshot {
    // The stored route, not `route`'s filled-in copy: the mark must outlive this call.
    const r = this.stored(id);
    this.refuseBusy(r.snapshot, "archived");
    r.snapshot = { ...r.snapshot, archived_at: archived ? NOW() : null };
    return r.snapshot;
  }

  private deleteRoutes(ids: number[]): number[] {
    for (const id of ids) this.refuseBusy(this.route(id).snapshot, "deleted");
    this.routes = this.routes.filter((r) => !ids.includes(r.snapshot.id));
    return ids;
  }

  private saveSettings(next: Settings): Settings {
    const fields: FieldError[] = [];
    const r = next.retention;
    if (r.details_days !== null && r.routes_days !== null && r.details_days > r.routes_days)
      fields.push({
        path: "retention.details_days",
        message: `details go first: at most the ${r.routes_days} days routes are kept (${r.details_days} is too many)`,
      });
    if (fields.length > 0)
      throw { code: "validation", message: fields.map((f) => `${f.path}: ${f.message}`).join("; "), fields };
    this.settings = structuredClone(next);
    this.closeChoice = next.close_while_active;
    return this.settings;
  }

  private act(req: ActionRequest): RouteSnapshot {
    const r = this.stored(req.route_id);
    const s = r.snapshot;
    if (s.generation !== req.expected_generation) {
      throw {
        code: "stale",
        message: `the route changed: it is ${s.state} now, at generation ${s.generation}; look again before acting`,
        fields: [],
      };
    }
    const action = req.action.replace("_", "-");
    const resends = req.action === "retry_now" || req.action === "skip_now" || req.action === "resume";
    const dispatches = resends || req.action === "continue" || req.action === "handover";
    // As the engine: starting an agent after one may have done work needs the person's yes.
    if (dispatches && s.repeat_risk && !req.confirm_repeat)
      throw {
        code: "conflict",
        message: `${action} ${resends ? "sends the prompt to an agent again" : "starts an agent"} and may repeat work: ${s.repeat_risk}; confirm that you want it`,
        fields: [],
      };
    const from = s.state;
    const risk = s.repeat_risk;
    s.generation += 1;
    s.deadline = null;
    // Every action replaces the reason the route was held for; a stop keeps its risk.
    s.repeat_risk = null;
    let text: string;
    switch (req.action) {
      case "stop":
        s.repeat_risk =
          from === "running"
            ? `attempt ${s.attempts} was stopped while its agent ran, so it may already have run tools or changed files`
            : risk;
        text = from === "running" ? `stopped the route and the agent of attempt ${s.attempts}` : "stopped the route";
        s.state = "stopped";
        s.actions = ["resume"];
        break;
      case "cancel_wait":
        s.state = "needs_manual";
        s.manual_reason = "the wait was cancelled";
        s.actions = ["retry_now", "stop"];
        text = "cancelled the scheduled retry; the route waits for you";
        break;
      case "retry_now":
      case "skip_now":
      case "resume":
      case "continue":
      case "handover":
        s.state = "running";
        s.actions = ["stop"];
        s.attempts += 1;
        text = `started attempt ${s.attempts} on ${s.candidate_name} (candidate ${s.candidate_index + 1})`;
        break;
    }
    s.unavailable = unavailable(s);
    r.manual_actions = [
      ...(r.manual_actions ?? []),
      {
        generation: s.generation,
        action: req.action,
        by: "app",
        at: NOW(),
        from,
        attempt: dispatches ? s.attempts : null,
        text: req.confirm_repeat && risk ? `${text}, after you confirmed it may repeat work (${risk})` : text,
      },
    ];
    return s;
  }
}
