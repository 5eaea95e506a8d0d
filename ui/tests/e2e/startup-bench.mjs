// App cold start and resident memory with a populated database. Starts the
// real app (RECOURSE_APP_BINARY, a release build from scripts/bench-app.sh)
// RUNS times through tauri-driver, each on a fresh copy of APP_DB, and prints
// per-run figures and their medians:
//   - process start → first contentful paint (the app frame);
//   - process start → the loaded route list painted (the UI's
//     `recourse:routes-painted` performance mark), checking that the first
//     page is listed and the "All" filter counts every route (while the
//     engine is still opening, read from the file);
//   - process start → the engine open (the UI's `recourse:engine-ready`
//     mark; the list is then reloaded from the engine);
//   - "Needs you" right after start, twice: clicked as soon as the first
//     list is painted (while the engine is still opening on a large
//     database), and clicked as soon as the list the opened engine reloads
//     is painted (while its adoption's aftermath runs); each printed with
//     the moment of its click after process start;
//   - resident memory of the app and every process it started (WebKit's web
//     and network processes), as RSS and as PSS (shared pages split fairly),
//     after SETTLE_MS of idling;
//   - then each list filter and search, from the click (or Enter in the
//     search field) to the new list painted: the same mark, set again after
//     every load. The searches are the worst case, text no route holds (the
//     whole table is scanned), and a route id;
//   - then opening the newest route (it holds the longest transcript kept)
//     and its transcript: from the click on "Transcript" to the transcript
//     painted (the UI's `recourse:transcript-painted` mark), with the
//     entries it shows (its first page) and holds; then from the click on
//     its "Show all" to every entry painted (`recourse:transcript-revealed`).
// Process start is read from /proc, so WebDriver's own start-up is not counted.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { appBinary, startApp } from "./webdriver.mjs";

const source = process.env.APP_DB;
const runs = Number(process.env.RUNS ?? 5);
const settleMs = Number(process.env.SETTLE_MS ?? 5000);
if (!source || !existsSync(source)) {
  console.error("startup-bench: APP_DB must name an existing database (scripts/bench-app.sh writes one)");
  process.exit(2);
}

const CLOCK_TICKS = 100; // USER_HZ on Linux
const binary = realpathSync(appBinary);

/** Pids of live processes, each with its parent and command name. */
function processes() {
  const out = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // The command name is parenthesised and may hold spaces: split after it.
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const fields = stat.slice(close + 2).split(" ");
      out.push({ pid: Number(name), comm, ppid: Number(fields[1]), startTicks: Number(fields[19]) });
    } catch {
      /* exited while we looked */
    }
  }
  return out;
}

/** The app process started with RECOURSE_DB=`db`. */
function appProcess(db) {
  for (const p of processes()) {
    try {
      if (realpathSync(`/proc/${p.pid}/exe`) !== binary) continue;
      const environ = readFileSync(`/proc/${p.pid}/environ`, "utf8").split("\0");
      if (environ.includes(`RECOURSE_DB=${db}`)) return p;
    } catch {
      /* not ours to read, or gone */
    }
  }
  throw new Error(`no running ${binary} with RECOURSE_DB=${db}`);
}

/** Wall-clock epoch milliseconds at which a process started. */
function startedAtEpochMs(startTicks) {
  const uptimeS = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  return Date.now() - (uptimeS - startTicks / CLOCK_TICKS) * 1000;
}

function tree(root) {
  const all = processes();
  const members = [root];
  for (let i = 0; i < members.length; i++) {
    for (const p of all) if (p.ppid === members[i].pid) members.push(p);
  }
  return members;
}

function memoryKiB(pid) {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const field = (name) => Number(text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0);
  return { rss: field("Rss"), pss: field("Pss") };
}

const readMarks = `
  const mark = performance.getEntriesByName("recourse:routes-painted")[0];
  const fcp = performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint");
  return mark ? {
    timeOrigin: performance.timeOrigin,
    listPainted: mark.startTime,
    firstContentfulPaint: fcp ? fcp.startTime : null,
    rows: document.querySelectorAll("[data-route]").length,
    total: Number(document.querySelector("[data-testid=filter-all] .count")?.textContent ?? -1),
  } : null;`;

/** When the UI learned the engine is open (it then reloads the list). */
const readReady = `return performance.getEntriesByName("recourse:engine-ready")[0]?.startTime ?? null;`;

const PAGE = 100;

/** Each filter, then two searches (Enter searches at once, without the typing pause). */
const LIST_ACTIONS = [
  ["needs you", `document.querySelector("[data-testid=filter-needs_you]").click()`],
  ["active", `document.querySelector("[data-testid=filter-active]").click()`],
  ["finished", `document.querySelector("[data-testid=filter-finished]").click()`],
  ["all", `document.querySelector("[data-testid=filter-all]").click()`],
  ["search, no match", search("no route holds this text")],
  ["search, route id", search("#50000")],
];

function search(text) {
  return `const el = document.getElementById("route-search");
    el.value = ${JSON.stringify(text)};
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));`;
}

/** Milliseconds from `action` to the next painted list, in the page's own clock. */
async function timeListChange(app, action) {
  const started = await app.execute(`
    const before = performance.getEntriesByName("recourse:routes-painted").length;
    const t0 = performance.now();
    ${action};
    return { before, t0 };`);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const painted = await app.execute(
      `return performance.getEntriesByName("recourse:routes-painted")[arguments[0]]?.startTime ?? null;`,
      [started.before],
    );
    if (painted !== null) return painted - started.t0;
    await sleep(10);
  }
  throw new Error("the list was not painted again within 30 s");
}

/** Milliseconds from `t0` (the page's clock) to the first painted list after it. */
async function paintedAfter(app, before, what) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const painted = await app.execute(
      `return performance.getEntriesByName("recourse:routes-painted")[arguments[0]]?.startTime ?? null;`,
      [before],
    );
    if (painted !== null) return painted;
    await sleep(5);
  }
  throw new Error(`${what}: the list was not painted again within 30 s`);
}

/**
 * Clicks "Needs you" as soon as the first list is painted: the page itself
 * watches for the mark (no poll from here), reads the first list's figures
 * (`readMarks`), then clicks; then times the new list painted. On a large
 * database this is while the engine is still opening; `t0` says when.
 */
async function clickWhenFirstPainted(app, index, deadline) {
  let clicked = null;
  while (clicked === null && Date.now() < deadline) {
    // At most 20 s per call, within WebDriver's 30 s script timeout.
    clicked = await app.executeAsync(`
      const done = arguments[arguments.length - 1];
      const read = () => { ${readMarks} };
      const click = () => {
        const marks = read();
        const t0 = performance.now();
        document.querySelector("[data-testid=filter-needs_you]").click();
        done({ marks, t0, before: performance.getEntriesByName("recourse:routes-painted").length });
      };
      const observer = new PerformanceObserver((list) => {
        if (!list.getEntriesByName("recourse:routes-painted").length) return;
        observer.disconnect();
        click();
      });
      observer.observe({ type: "mark", buffered: true });
      setTimeout(() => { observer.disconnect(); done(null); }, 20000);`);
  }
  if (clicked === null) throw new Error(`run ${index}: the route list was not painted within 2 min`);
  const painted = await paintedAfter(app, clicked.before, `run ${index}, "Needs you" at the first list`);
  return { marks: clicked.marks, t0: clicked.t0, ms: painted - clicked.t0 };
}

/**
 * Right after the engine opened: once the list it reloads then is painted,
 * "Needs you" is clicked (its adoption's aftermath is still running), then
 * "All" to leave the list as it was for the settled figures.
 */
async function needsYouEarly(app, index) {
  const what = `run ${index}, "Needs you" after the engine opened`;
  // The reload the engine's opening starts is the first mark after the ready one.
  const reloaded = await app.execute(`
    const ready = performance.getEntriesByName("recourse:engine-ready")[0].startTime;
    return performance.getEntriesByName("recourse:routes-painted").filter((m) => m.startTime < ready).length;`);
  await paintedAfter(app, reloaded, what);
  const started = await app.execute(`
    const before = performance.getEntriesByName("recourse:routes-painted").length;
    const t0 = performance.now();
    document.querySelector("[data-testid=filter-needs_you]").click();
    return { before, t0 };`);
  const painted = await paintedAfter(app, started.before, what);
  await timeListChange(app, `document.querySelector("[data-testid=filter-all]").click()`);
  return { t0: started.t0, ms: painted - started.t0 };
}

/**
 * Opens the newest route and its first attempt's transcript; milliseconds
 * from the click to the transcript painted, how many entries it shows and
 * holds, and milliseconds from "Show all" to all of them painted (null when
 * it fits one page).
 */
async function timeTranscriptOpen(app, index) {
  await timeListChange(app, search(""));
  await app.execute(`document.querySelector("[data-route]").click();`);
  const deadline = Date.now() + 30_000;
  let started = null;
  while (started === null && Date.now() < deadline) {
    started = await app.execute(`
      const summary = document.querySelector("[data-testid=attempt-agent] summary");
      if (!summary) return null;
      const t0 = performance.now();
      summary.click();
      return t0;`);
    if (started === null) await sleep(20);
  }
  if (started === null) throw new Error(`run ${index}: the newest route shows no transcript`);
  while (Date.now() < deadline) {
    const painted = await app.execute(`
      const m = performance.getEntriesByName("recourse:transcript-painted")[0];
      const view = document.querySelector("[data-testid=transcript]");
      return m && view ? {
        at: m.startTime,
        entries: view.querySelectorAll(".entry").length,
        total: Number(view.dataset.entries),
      } : null;`);
    if (painted !== null) {
      const all = painted.entries < painted.total ? await timeShowAll(app, index, painted.total, deadline) : null;
      return { ms: painted.at - started, entries: painted.entries, total: painted.total, allMs: all };
    }
    await sleep(10);
  }
  throw new Error(`run ${index}: the transcript was not painted within 30 s`);
}

/** Milliseconds from the click on the open transcript's "Show all" to its `total` entries painted. */
async function timeShowAll(app, index, total, deadline) {
  const t0 = await app.execute(`
    const t0 = performance.now();
    document.querySelector("[data-testid=transcript-all]").click();
    return t0;`);
  while (Date.now() < deadline) {
    const at = await app.execute(
      `return performance.getEntriesByName("recourse:transcript-revealed")[0]?.startTime ?? null;`,
    );
    if (at !== null) {
      const shown = await app.execute(`return document.querySelectorAll("[data-testid=transcript] .entry").length;`);
      if (shown !== total) throw new Error(`run ${index}: "Show all" painted ${shown} of ${total} entries`);
      return at - t0;
    }
    await sleep(10);
  }
  throw new Error(`run ${index}: "Show all" was not painted within 30 s`);
}

async function oneRun(index, expectedRoutes) {
  const dir = mkdtempSync(join(tmpdir(), "recourse-startup-"));
  const db = join(dir, "recourse.db");
  copyFileSync(source, db);
  const app = await startApp({ env: { RECOURSE_DB: db } });
  try {
    const deadline = Date.now() + 120_000;
    // Right after start: "Needs you" clicked as soon as the first list is
    // painted, while the engine is still opening.
    const first = await clickWhenFirstPainted(app, index, deadline);
    const marks = first.marks;
    if (marks.total !== expectedRoutes || marks.rows !== Math.min(PAGE, expectedRoutes)) {
      throw new Error(
        `run ${index}: ${marks.rows} routes listed of ${marks.total} counted, the database holds ${expectedRoutes}`,
      );
    }
    let readyAt = null;
    while (readyAt === null && Date.now() < deadline) {
      readyAt = await app.execute(readReady);
      if (readyAt === null) await sleep(50);
    }
    if (readyAt === null) throw new Error(`run ${index}: the engine was not ready within 2 min`);
    const root = appProcess(db);
    const startedAt = startedAtEpochMs(root.startTicks);
    const early = await needsYouEarly(app, index);
    await sleep(settleMs);
    const members = tree(root);
    const memory = members.map((p) => ({ comm: p.comm, ...memoryKiB(p.pid) }));
    const lists = {};
    for (const [name, action] of LIST_ACTIONS) lists[name] = await timeListChange(app, action);
    const transcript = await timeTranscriptOpen(app, index);
    const at = (t) => marks.timeOrigin + t - startedAt;
    return {
      early: {
        first: { ms: first.ms, atMs: at(first.t0), engineOpen: first.t0 >= readyAt },
        ready: { ms: early.ms, atMs: at(early.t0), afterReadyMs: early.t0 - readyAt },
      },
      lists,
      transcript,
      fcpMs: marks.firstContentfulPaint === null ? null : marks.timeOrigin + marks.firstContentfulPaint - startedAt,
      listMs: marks.timeOrigin + marks.listPainted - startedAt,
      readyMs: marks.timeOrigin + readyAt - startedAt,
      appRssMiB: memory[0].rss / 1024,
      rssMiB: memory.reduce((s, m) => s + m.rss, 0) / 1024,
      pssMiB: memory.reduce((s, m) => s + m.pss, 0) / 1024,
      rows: marks.rows,
      processes: memory.map((m) => `${m.comm} ${(m.pss / 1024).toFixed(0)}`).join(", "),
    };
  } finally {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
};
const fmt = (x, digits = 0) => (x === null ? "n/a" : x.toFixed(digits));

const expectedRoutes = Number(process.env.APP_DB_ROUTES ?? 1000);
console.log(`# App start-up: ${binary}, ${expectedRoutes} routes, ${runs} runs, memory after ${settleMs} ms idle`);
let listed = null;
console.log(
  "| run | start → first paint (ms) | start → route list painted (ms) | start → engine ready (ms) | app RSS (MiB) | all processes RSS (MiB) | all processes PSS (MiB) | PSS by process (MiB) |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
const results = [];
for (let i = 1; i <= runs; i++) {
  const r = await oneRun(i, expectedRoutes);
  results.push(r);
  listed ??= r.rows;
  console.log(
    `| ${i} | ${fmt(r.fcpMs)} | ${fmt(r.listMs)} | ${fmt(r.readyMs)} | ${fmt(r.appRssMiB, 1)} | ${fmt(r.rssMiB, 1)} | ${fmt(r.pssMiB, 1)} | ${r.processes} |`,
  );
}
const pick = (k) => median(results.map((r) => r[k]));
console.log(
  `| median | ${fmt(pick("fcpMs"))} | ${fmt(pick("listMs"))} | ${fmt(pick("readyMs"))} | ${fmt(pick("appRssMiB"), 1)} | ${fmt(pick("rssMiB"), 1)} | ${fmt(pick("pssMiB"), 1)} | |`,
);
console.log(`routes rendered in the first list: ${listed}`);
console.log("\n| list change → painted (ms) | " + results.map((_, i) => `run ${i + 1}`).join(" | ") + " | median |");
console.log("| --- | " + results.map(() => "---").join(" | ") + " | --- |");
for (const [name] of LIST_ACTIONS) {
  const each = results.map((r) => r.lists[name]);
  console.log(`| ${name} | ${each.map((x) => fmt(x)).join(" | ")} | ${fmt(median(each))} |`);
}
console.log(
  '\n| "Needs you" right after start → painted (ms); clicked at (ms after process start) | ' +
    results.map((_, i) => `run ${i + 1}`).join(" | ") +
    " | median |",
);
console.log("| --- | " + results.map(() => "---").join(" | ") + " | --- |");
const firsts = results.map((r) => r.early.first);
console.log(
  `| clicked as the first list was painted${firsts.some((f) => f.engineOpen) ? " (the engine was open in some runs)" : " (the engine still opening)"} | ` +
    firsts.map((f) => `${fmt(f.ms)} (at ${fmt(f.atMs)})`).join(" | ") +
    ` | ${fmt(median(firsts.map((f) => f.ms)))} |`,
);
const readies = results.map((r) => r.early.ready);
console.log(
  `| clicked once the list reloaded from the opened engine was painted (ms after it opened) | ` +
    readies.map((f) => `${fmt(f.ms)} (at ${fmt(f.atMs)}; +${fmt(f.afterReadyMs)})`).join(" | ") +
    ` | ${fmt(median(readies.map((f) => f.ms)))} |`,
);
const opened = results.map((r) => r.transcript);
const { entries, total } = opened[0];
console.log(
  `\n| open the longest transcript (${entries} of its ${total} entries shown) → painted (ms) | ${opened.map((t) => fmt(t.ms)).join(" | ")} | ${fmt(median(opened.map((t) => t.ms)))} |`,
);
if (entries < total) {
  console.log(
    `| then "Show all" (${total} entries) → painted (ms) | ${opened.map((t) => fmt(t.allMs)).join(" | ")} | ${fmt(median(opened.map((t) => t.allMs)))} |`,
  );
}
