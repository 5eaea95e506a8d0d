// Live route state for the Routes area: one filtered, searched page of
// routes at a time (newest first, selected and paged by the backend's SQL;
// "Show older" appends the next page), the count behind each filter, the
// last generation seen per route (late events are dropped), the selected
// route and its attempt history, and state-change announcements. Changes
// made by another process (the CLI) arrive as the same events: a route
// archived or brought back (its generation unchanged), and routes deleted.
import { tick } from "svelte";
import { ROUTE_FILTER_STATES, commands, events } from "../bindings";
import type {
  ActionRequest,
  EngineStatus,
  RouteCounts,
  RouteDetail,
  RouteFilter,
  RouteSnapshot,
  StartRun,
} from "./types";
import { call, messageOf } from "./api";
import { navigation } from "./navigation.svelte";
import { runForm } from "./run-form.svelte";
import { STATE_TEXT } from "../components/routes/labels";

/** Routes per page: rendering a thousand rows doubled the time to the first painted list. */
export const PAGE = 100;

let list = $state<RouteSnapshot[]>([]);
let more = $state(false);
let counts = $state<RouteCounts>({
  needs_you: 0,
  active: 0,
  running: 0,
  waiting: 0,
  stopped: 0,
  finished: 0,
  archived: 0,
  all: 0,
});
let filter = $state<RouteFilter>("all");
let search = $state("");
let loaded = $state(false);
let loadError = $state<string | null>(null);
let loadingOlder = $state(false);
let selected = $state<number | null>(null);
let detail = $state<RouteDetail | null>(null);
let detailError = $state<string | null>(null);
/** The engine opens behind the window; until then the list is read from the file. Null until known. */
let engine = $state<EngineStatus | null>(null);
/** Highest generation seen per route; never goes down. */
const seen = new Map<number, number>();
/** The snapshot of that generation, to keep over an older one in a late page. */
const latest = new Map<number, RouteSnapshot>();
/** Only the newest list and detail requests may write their state. */
let listRequest = 0;
let detailRequest = 0;
let countsTimer: ReturnType<typeof setTimeout> | undefined;

function announceChange(before: RouteSnapshot | undefined, after: RouteSnapshot) {
  if (!before || before.state === after.state) return;
  const reason = after.state === "needs_manual" && after.manual_reason ? ` — ${after.manual_reason}` : "";
  navigation.announce(`Route ${after.id}: ${STATE_TEXT[after.state]}${reason}`);
}

/** Records a snapshot; returns the newer of it and the one already seen. */
function remember(s: RouteSnapshot): RouteSnapshot {
  const known = latest.get(s.id);
  if (known && (seen.get(s.id) ?? 0) > s.generation) return known;
  seen.set(s.id, s.generation);
  latest.set(s.id, s);
  return s;
}

/** Whether the shown filter keeps a route: the backend's `RouteFilter::states` (none: every state) and archive mark. */
function keeps(s: RouteSnapshot): boolean {
  const states: readonly RouteSnapshot["state"][] = ROUTE_FILTER_STATES[filter];
  const archived = filter === "archived";
  return (s.archived_at !== null) === archived && (states.length === 0 || states.includes(s.state));
}

/** A new route belongs at the top of the shown page if it passes the filter and no search is typed. */
function belongsOnTop(s: RouteSnapshot): boolean {
  const newest = list[0]?.id ?? 0;
  return search.trim() === "" && s.id > newest && keeps(s);
}

/** Takes a snapshot whose generation did not move (an archive mark changed). */
function replace(s: RouteSnapshot) {
  latest.set(s.id, s);
  const at = list.findIndex((r) => r.id === s.id);
  if (at >= 0 && !keeps(s)) list = list.filter((r) => r.id !== s.id);
  else if (at >= 0) list[at] = s;
  else if (keeps(s) && search.trim() === "") {
    // Back in the shown filter (brought back from Archived elsewhere): in
    // its place by id, if that place is within the loaded pages.
    const place = list.findIndex((r) => r.id < s.id);
    if (place >= 0) list = [...list.slice(0, place), s, ...list.slice(place)];
    else if (!more) list = [...list, s];
  }
  if (detail && detail.snapshot.id === s.id) detail = { ...detail, snapshot: s };
  refreshCountsSoon();
}

/**
 * Takes a snapshot if it is newer than what we have for its route; returns
 * whether it was applied. A shown route is updated in place; a new one is
 * put on top when it belongs to the shown filter.
 */
function apply(snapshot: RouteSnapshot): boolean {
  const last = seen.get(snapshot.id);
  if (last !== undefined && snapshot.generation <= last) return false;
  const before = list.find((r) => r.id === snapshot.id) ?? latest.get(snapshot.id);
  seen.set(snapshot.id, snapshot.generation);
  latest.set(snapshot.id, snapshot);
  const at = list.findIndex((r) => r.id === snapshot.id);
  if (at >= 0) list[at] = snapshot;
  else if (belongsOnTop(snapshot)) list = [snapshot, ...list];
  if (detail && detail.snapshot.id === snapshot.id) detail = { ...detail, snapshot };
  announceChange(before, snapshot);
  refreshCountsSoon();
  return true;
}

/** Drops deleted routes (here or by another process) from the list, the selection and the counts. */
function forget(deleted: number[]) {
  if (deleted.length === 0) return;
  list = list.filter((r) => !deleted.includes(r.id));
  for (const id of deleted) {
    latest.delete(id);
    seen.delete(id);
  }
  if (selected !== null && deleted.includes(selected)) routes.select(null);
  runForm.forget(deleted);
  refreshCountsSoon();
}

/** Counts change with every transition; one cheap request after a burst of events. */
function refreshCountsSoon() {
  clearTimeout(countsTimer);
  countsTimer = setTimeout(async () => {
    try {
      counts = await call(commands.routeCounts());
    } catch {
      // Only the counts are late; the next load or event corrects them.
    }
  }, 300);
}

async function loadDetail(id: number): Promise<void> {
  const request = ++detailRequest;
  try {
    const d = await call(commands.routeDetail(id));
    if (request !== detailRequest) return;
    apply(d.snapshot);
    detail = { ...d, snapshot: remember(d.snapshot) };
    detailError = null;
  } catch (err) {
    if (request !== detailRequest) return;
    detailError = `Could not load route ${id}: ${messageOf(err)}`;
  }
}

/**
 * Marks the moment a loaded list has been painted (a timeout after the next
 * frame runs once that frame is on screen): the benchmark
 * (scripts/bench-app.sh) reads the first mark as start-up, later ones as
 * filter and search times.
 */
async function markPainted() {
  await tick();
  requestAnimationFrame(() => setTimeout(() => performance.mark("recourse:routes-painted")));
}

/** Marks the moment the engine is known to be open, for the benchmark's "engine ready" time. */
function markEngineReady() {
  performance.mark("recourse:engine-ready");
}

/** Fetches one page of the current filter and search; null when a newer request replaced it. */
async function fetchPage(before: number | null) {
  const request = ++listRequest;
  const page = await call(commands.listRoutes({ filter, search: search.trim(), before, limit: PAGE }));
  return request === listRequest ? page : null;
}

export const routes = {
  get list() {
    return list;
  },
  /** Older routes match beyond the shown ones. */
  get more() {
    return more;
  },
  get counts() {
    return counts;
  },
  get filter() {
    return filter;
  },
  get search() {
    return search;
  },
  get loaded() {
    return loaded;
  },
  get loadError() {
    return loadError;
  },
  get loadingOlder() {
    return loadingOlder;
  },
  get selected() {
    return selected;
  },
  /** The freshest snapshot of the selected route, shown in the list or not. */
  get current(): RouteSnapshot | null {
    if (selected === null) return null;
    return list.find((r) => r.id === selected) ?? (detail?.snapshot.id === selected ? detail.snapshot : null);
  },
  /** Attempt history of the selected route (null until loaded). */
  get detail(): RouteDetail | null {
    return detail && detail.snapshot.id === selected ? detail : null;
  },
  get detailError() {
    return detailError;
  },
  /** Still starting, ready, or failed to open the database (with why). */
  get engine() {
    return engine;
  },

  /** Loads the first page of the current filter and search; keeps any snapshot newer than the reply's. */
  async load(): Promise<void> {
    try {
      const page = await fetchPage(null);
      if (!page) return;
      list = page.routes.map(remember);
      more = page.more;
      counts = page.counts;
      loadError = null;
      loaded = true;
      void markPainted();
    } catch (err) {
      loadError = `Could not load routes: ${messageOf(err)}`;
      loaded = true;
    }
  },

  /** Appends the next older page ("Show older"). */
  async loadOlder(): Promise<void> {
    const last = list[list.length - 1];
    if (!last || loadingOlder) return;
    loadingOlder = true;
    try {
      const page = await fetchPage(last.id);
      if (!page) return;
      const shown = new Set(list.map((r) => r.id));
      list = [...list, ...page.routes.filter((r) => !shown.has(r.id)).map(remember)];
      more = page.more;
      counts = page.counts;
      loadError = null;
    } catch (err) {
      loadError = `Could not load older routes: ${messageOf(err)}`;
    } finally {
      loadingOlder = false;
    }
  },

  /** Shows the routes of another filter, from the newest. */
  setFilter(next: RouteFilter): Promise<void> {
    filter = next;
    return routes.load();
  },

  /** Shows the routes matching `text` (id, profile name or prompt), from the newest. */
  setSearch(text: string): Promise<void> {
    search = text;
    return routes.load();
  },

  /**
   * Listens for committed transitions and the engine's status; returns the
   * unlisten function. Load the list after it resolves, so a transition or
   * the engine opening in between is not missed.
   */
  async listen(): Promise<() => void> {
    // All at once: the first list waits for them (one round trip, not three).
    const [changed, removed, status] = await Promise.all([
      events.routeChanged.listen((e) => {
        const s = e.payload.snapshot;
        if (apply(s)) {
          if (s.id === selected) void loadDetail(s.id);
        } else if (seen.get(s.id) === s.generation && latest.get(s.id)?.archived_at !== s.archived_at) {
          // Archived or brought back elsewhere: the generation does not move.
          replace(s);
        }
      }),
      events.routesRemoved.listen((e) => forget(e.payload)),
      // The list shown while starting was read before the engine took over
      // the routes; once it has, the list is reloaded from it.
      events.engineStatus.listen((e) => {
        engine = e.payload;
        if (e.payload.state === "ready") {
          markEngineReady();
          void routes.load();
        }
      }),
    ]);
    void call(commands.engineStatus()).then(
      (now) => {
        if (engine !== null) return;
        engine = now;
        if (now.state === "ready") markEngineReady();
      },
      (err: unknown) => {
        loadError = `Could not load routes: ${messageOf(err)}`;
      },
    );
    return () => {
      changed();
      removed();
      status();
    };
  },

  /** Selects a route (null: none); the promise settles once its detail is read. */
  select(id: number | null): Promise<void> {
    selected = id;
    detailError = null;
    return id !== null ? loadDetail(id) : Promise.resolve();
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

  /** Archives a route at rest, or brings it back; throws the backend's refusal. */
  async archive(id: number, archived: boolean): Promise<void> {
    const snapshot = await call(commands.archiveRoute(id, archived));
    replace(snapshot);
    navigation.announce(`Route ${id} ${archived ? "archived" : "back in the lists"}`);
  },

  /** Deletes routes at rest with their history; throws the backend's refusal. */
  async remove(ids: number[]): Promise<void> {
    const deleted = await call(commands.deleteRoutes(ids));
    forget(deleted);
    navigation.announce(`Route ${deleted.join(", ")} deleted`);
  },

  /** Sends a fenced manual action; throws the backend's error unchanged. */
  async act(request: ActionRequest): Promise<void> {
    const snapshot = await call(commands.routeAction(request));
    apply(snapshot);
    if (snapshot.id === selected) await loadDetail(snapshot.id);
  },
};
