// Which enabled candidates of a profile can start now, in words: the run
// form warns before Start run and the profile editor after Save. Both ask
// the same backend check as the editor's Check button (program on PATH,
// credentials present). It only warns: the check runs in Recourse's own
// environment, which may differ from the one a run gets.
import { commands } from "../bindings";
import type { Candidate } from "./types";

/** An enabled candidate that is not ready, with why in the backend's words. */
export type Unready = { name: string; why: string };

/** The enabled candidates of `candidates` and which of them are not ready. */
export async function unreadyOf(candidates: Candidate[]): Promise<{ enabled: number; unready: Unready[] }> {
  const enabled = candidates.filter((c) => c.enabled);
  const checks = await Promise.all(enabled.map((c) => commands.readiness(c.agent)));
  const unready = enabled.flatMap((c, i) =>
    checks[i].ready ? [] : [{ name: c.name, why: checks[i].problems.join("; ") || "not ready" }],
  );
  return { enabled: enabled.length, unready };
}

/** `“opus” — claude is not found on PATH; “codex” — …` */
export function unreadyWords(unready: Unready[]): string {
  return unready.map((u) => `“${u.name}” — ${u.why}`).join("; ");
}
