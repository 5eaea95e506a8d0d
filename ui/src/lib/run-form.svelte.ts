// What the run form holds, kept while the person moves between areas (the
// form itself is unmounted then), and "Run again", which fills it from a
// route. The form starts with the default profile and directory from
// Settings until the person chooses others. A route run again whose agent
// may already have done its work (the backend's repeat_risk) leaves that
// risk with the form, which says so and asks before it starts the run, for
// as long as the form still holds that route's prompt and profile and the
// route still exists: another prompt, another profile or the route deleted,
// and there is nothing to warn about.
let profileId = $state("");
let prompt = $state("");
let cwd = $state("");
/** Bumped by `runAgain`, so the form unfolds and takes focus. */
let requested = $state(0);
let touched = false;
/** The route run again, why its prompt may repeat work already done, and what it filled in; null when it may not. */
let ranAgain = $state<{ routeId: number; text: string; prompt: string; profileId: string } | null>(null);
/** The warning while the form still holds what the route filled in. */
const risk = $derived(
  ranAgain !== null && ranAgain.prompt.trim() === prompt.trim() && ranAgain.profileId === profileId
    ? { routeId: ranAgain.routeId, text: ranAgain.text }
    : null,
);

export const runForm = {
  get profileId() {
    return profileId;
  },
  set profileId(v: string) {
    profileId = v;
    touched = true;
  },
  get prompt() {
    return prompt;
  },
  set prompt(v: string) {
    prompt = v;
  },
  get cwd() {
    return cwd;
  },
  set cwd(v: string) {
    cwd = v;
    touched = true;
  },
  get requested() {
    return requested;
  },
  get risk() {
    return risk;
  },
  /** Applies the Settings defaults unless the person has chosen already. */
  defaults(profile: number | null, dir: string | null) {
    if (touched) return;
    if (profile !== null) profileId = String(profile);
    if (dir !== null) cwd = dir;
  },
  /** Fills the form from a route to run again, with the prompt to edit. */
  runAgain(from: {
    routeId: number;
    profileId: number | null;
    prompt: string;
    cwd: string | null;
    repeatRisk: string | null;
  }) {
    if (from.profileId !== null) profileId = String(from.profileId);
    ranAgain =
      from.repeatRisk === null
        ? null
        : { routeId: from.routeId, text: from.repeatRisk, prompt: from.prompt, profileId };
    prompt = from.prompt;
    cwd = from.cwd ?? "";
    touched = true;
    requested += 1;
  },
  /** After a run started: the prompt is used, the choices stay. */
  started() {
    prompt = "";
    ranAgain = null;
  },
  /** Routes deleted (here or elsewhere): a warning about one of them goes with it. */
  forget(deleted: number[]) {
    if (ranAgain !== null && deleted.includes(ranAgain.routeId)) ranAgain = null;
  },
};
