// What the run form holds, kept while the person moves between areas (the
// form itself is unmounted then), and "Run again", which fills it from a
// route. The form starts with the default profile and directory from
// Settings until the person chooses others.
let profileId = $state("");
let prompt = $state("");
let cwd = $state("");
/** Bumped by `runAgain`, so the form unfolds and takes focus. */
let requested = $state(0);
let touched = false;

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
  /** Applies the Settings defaults unless the person has chosen already. */
  defaults(profile: number | null, dir: string | null) {
    if (touched) return;
    if (profile !== null) profileId = String(profile);
    if (dir !== null) cwd = dir;
  },
  /** Fills the form from a route to run again, with the prompt to edit. */
  runAgain(from: { profileId: number | null; prompt: string; cwd: string | null }) {
    if (from.profileId !== null) profileId = String(from.profileId);
    prompt = from.prompt;
    cwd = from.cwd ?? "";
    touched = true;
    requested += 1;
  },
  /** After a run started: the prompt is used, the choices stay. */
  started() {
    prompt = "";
  },
};
