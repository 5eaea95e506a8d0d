// Live route state for the Routes area: the list of snapshots (newest first),
// the last generation seen per route (late events are dropped), the selected
// route and its attempt history, and state-change announcements.
import { commands, events } from "../bindings";
import type { ActionRequest, RouteDetail, RouteSnapshot, StartRun } from "./types";
import { call, messageOf } from "./api";
import { navigation } from "./navigation.svelte";
import { STATE_TEXT } from "../components/routes/labels";

let list = $state<RouteSnapshot[]>([]);
let loaded = $state(false);
let loadError = $state<string | null>(null);
let selected = $state<number | null>(null);
let detail = $state<RouteDetail | null>(null);
let detailError = $state<string | null>(null);
/** Highest generation seen per route; never goes down. */
const seen = new Map<number, number>();
/** Only the newest detail request may write `detail`. */
let detailRequest = 0;

function newestFirst(a: RouteSnapshot, b: RouteSnapshot): number {
  return Date.parse(b.created_at) - Date.parse(a.created_at) || b.id - a.id;
}

function announceChange(before: RouteSnapshot | undefined, after: RouteSnapshot) {
  if (!before || before.state === after.state) return;
  const reason = after.state === "needs_manual" && after.manual_reason ? ` — ${after.manual_reason}` : "";
  navigation.announce(`Route ${after.id}: ${STATE_TEXT[after.state]}${reason}`);
}

/**
 * Takes a snapshot if it is newer than what we have for its route; returns
 * whether it was applied.
 */
function apply(snapshot: RouteSnapshot): boolean {
  const last = seen.get(snapshot.id);
  if (last !== undefined && snapshot.generation <= last) return false;
  seen.set(snapshot.id, snapshot.generation);
  const before = list.find((r) => r.id === snapshot.id);
  list = [...list.filter((r) => r.id !== snapshot.id), snapshot].sort(newestFirst);
  announceChange(before, snapshot);
  return true;
}

async function loadDetail(id: number): Promise<void> {
  const request = ++detailRequest;
  try {
    const d = await call(commands.routeDetail(id));
    if (request !== detailRequest) return;
    apply(d.snapshot);
    detail = d;
    detailError = null;
  } catch (err) {
    if (request !== detailRequest) return;
    detailError = `Could not load route ${id}: ${messageOf(err)}`;
  }
}

export const routes = {
  get list() {
    return list;
  },
  get loaded() {
    return loaded;
  },
  get loadError() {
    return loadError;
  },
  get selected() {
    return selected;
  },
  /** The freshest snapshot of the selected route. */
  get current(): RouteSnapshot | null {
    return list.find((r) => r.id === selected) ?? null;
  },
  /** Attempt history of the selected route (null until loaded). */
  get detail(): RouteDetail | null {
    return detail && detail.snapshot.id === selected ? detail : null;
  },
  get detailError() {
    return detailError;
  },

  /** Reloads every route; keeps any snapshot newer than the reply's. */
  async load(): Promise<void> {
    try {
      const fresh = await call(commands.listRoutes());
      const kept = list.filter(
        (r) => (seen.get(r.id) ?? 0) > (fresh.find((f) => f.id === r.id)?.generation ?? Infinity),
      );
      const taken = fresh.filter((f) => !kept.some((k) => k.id === f.id));
      for (const s of taken) seen.set(s.id, Math.max(seen.get(s.id) ?? 0, s.generation));
      list = [...kept, ...taken].sort(newestFirst);
      loadError = null;
    } catch (err) {
      loadError = `Could not load routes: ${messageOf(err)}`;
    } finally {
      loaded = true;
    }
  },

  /** Listens for committed transitions; returns the unlisten function. */
  listen(): Promise<() => void> {
    return events.routeChanged.listen((e) => {
      if (apply(e.payload.snapshot) && e.payload.route_id === selected) void loadDetail(selected);
    });
  },

  select(id: number | null) {
    selected = id;
    detailError = null;
    if (id !== null) void loadDetail(id);
  },

  /** Reloads one route (after a refused action) from the backend. */
  reload(id: number): Promise<void> {
    return loadDetail(id);
  },

  async start(request: StartRun): Promise<RouteSnapshot> {
    const snapshot = await call(commands.startRun(request));
    apply(snapshot);
    navigation.announce(`Route ${snapshot.id} started on ${snapshot.profile_name}`);
    routes.select(snapshot.id);
    return snapshot;
  },

  /** Sends a fenced manual action; throws the backend's error unchanged. */
  async act(request: ActionRequest): Promise<void> {
    const snapshot = await call(commands.routeAction(request));
    apply(snapshot);
    if (snapshot.id === selected) await loadDetail(snapshot.id);
  },
};
