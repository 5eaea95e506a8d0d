// Hash navigation between areas, a guard that stops unsaved edits from being
// dropped silently, and the text of the polite live region.
export type Area = "routes" | "profiles" | "accounts" | "catalogue" | "settings";
const AREAS: readonly Area[] = ["routes", "profiles", "accounts", "catalogue", "settings"];

function areaFromHash(): Area {
  const id = location.hash.replace(/^#\/?/, "").split("/")[0];
  return (AREAS as readonly string[]).includes(id) ? (id as Area) : "routes";
}

// From the address at once: a view drawn before `start` (the first one)
// must not take another area's `#/<area>/<sub>` for its own.
let area = $state<Area>(areaFromHash());
let announcement = $state("");
let announcing: ReturnType<typeof setTimeout>[] = [];
/**
 * The live region is emptied first and given the words a moment later, so
 * the same words said twice are a change a screen reader says again; they
 * stay long enough to be read, then go, so nobody later finds an old
 * message there ("added at position 1" after the list changed again).
 */
const SAY_AFTER_MS = 100;
const CLEAR_AFTER_MS = 7000;
/**
 * Returns false to hold navigation (unsaved changes); it may call `proceed`
 * later, once the person has confirmed.
 */
type LeaveGuard = (proceed: () => void) => boolean;
let leaveGuard: LeaveGuard | null = null;

function enter(next: Area, push: boolean, sub?: string) {
  area = next;
  const hash = sub ? `#/${next}/${sub}` : `#/${next}`;
  if (push) history.pushState(null, "", hash);
  else history.replaceState(null, "", hash);
}

export const navigation = {
  get area() {
    return area;
  },
  get announcement() {
    return announcement;
  },
  start() {
    area = areaFromHash();
    window.addEventListener("hashchange", () => {
      const next = areaFromHash();
      if (next === area) return;
      if (leaveGuard && !leaveGuard(() => enter(next, false))) {
        history.replaceState(null, "", `#/${area}`);
        return;
      }
      area = next;
    });
  },
  /** Opens an area; `sub` says what in it (`inbox/7-2`, a route id), read by the view when it mounts. */
  go(next: Area, sub?: string) {
    if (next === area) return;
    if (leaveGuard && !leaveGuard(() => enter(next, true, sub))) return;
    enter(next, true, sub);
  },
  /** The parts of the hash after the area (`#/catalogue/inbox/7-2` → `["inbox", "7-2"]`). */
  sub(): string[] {
    return location.hash.replace(/^#\/?/, "").split("/").slice(1);
  },
  /** Views with unsaved edits install a guard; pass null to remove it. */
  guardLeaving(guard: LeaveGuard | null) {
    leaveGuard = guard;
  },
  /** Tells screen readers about a change (never call this per tick). */
  announce(text: string) {
    for (const timer of announcing) clearTimeout(timer);
    announcement = "";
    announcing = [
      setTimeout(() => (announcement = text), SAY_AFTER_MS),
      setTimeout(() => (announcement = ""), SAY_AFTER_MS + CLEAR_AFTER_MS),
    ];
  },
};
