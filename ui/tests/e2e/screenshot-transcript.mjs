// Saves screenshots of a real Claude Code run in the real app window: a real
// `recourse run` of the pinned Claude Code at access `edit`, inside the
// sandbox of tests/live/sandbox.sh, then the app opened on that database.
// - `transcript` (the mock's `write_file` scenario: the model asks to write a
//   file): the route's first attempt unfolded, `transcript-*.png`;
// - `continue` (`tool_then_error`: a tool runs, then the provider fails, and
//   the safety gate hands the route to a person): the Continue dialog with
//   the session it resumes, its message and what ran, `continue-*.png`.
// Run by scripts/screenshot-transcript.sh inside the sandbox.
// Usage: node screenshot-transcript.mjs OUT_DIR transcript|continue
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { repoRoot, startApp } from "./webdriver.mjs";

const out = resolve(process.argv[2] ?? "docs/screenshots");
const shot = process.argv[3] ?? "transcript";
const prompt =
  shot === "continue" ? "Print the marker, then finish." : "Leave a note for the team in recourse-note.txt";
mkdirSync(out, { recursive: true });
const recourse = join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug/recourse");
const workdir = process.cwd(); // the sandbox's git repository
const profile = {
  version: 1,
  name: "Claude Code",
  candidates: [
    {
      name: "claude",
      agent: {
        kind: "claude_code",
        access: "edit",
        program: join(repoRoot, "agents/node_modules/.bin/claude"),
        // The sandbox's: the app runs with a HOME of its own, and Continue
        // looks for the session where the CLI keeps it.
        config_dir: join(process.env.HOME, ".claude"),
        timeouts: { idle_s: 60, total_s: 180 },
      },
      transient: {
        wait_for_reset: { enabled: false, max_wait_seconds: 0 },
        retry: { enabled: true, max_retries: 2, initial_interval_seconds: 5 },
        on_exhausted: "skip",
      },
      hard: {
        wait_for_reset: { enabled: true, max_wait_seconds: 18000 },
        retry: { enabled: false, max_retries: 0, initial_interval_seconds: 0 },
        on_exhausted: "stop",
      },
    },
  ],
};

function prepare(db, dir) {
  const file = join(dir, "profile.json");
  writeFileSync(file, JSON.stringify(profile));
  execFileSync(recourse, ["profile", "import", file, "--db", db], { stdio: "inherit" });
  const args = ["run", "--profile", "Claude Code", "--prompt", prompt, "--cwd", workdir, "--db", db];
  try {
    const answer = execFileSync(recourse, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
    console.log(`recourse run answered: ${answer.trim()}`);
  } catch (err) {
    // `continue`: the run ends needing a person (exit 3), as it should.
    if (shot !== "continue" || err.status !== 3) throw err;
    console.log("recourse run: the route needs you");
  }
}

/** Opens the route's first attempt. */
async function transcript() {
  await app.waitForText("[data-testid=attempt-agent] summary");
  await app.execute(`
    const d = document.querySelector("[data-testid=attempt-agent] details");
    d.open = true;
    d.scrollIntoView({ block: "start" });`);
  await app.waitForText("[data-testid=transcript]");
}

/** Opens the Continue dialog. */
async function continuation() {
  await app.waitForText("button[data-action=continue]:not([disabled])");
  await app.execute(`document.querySelector("button[data-action=continue]").click()`);
  await app.waitForText("[data-testid=continuation-dialog] [data-testid=what-ran]");
}

// The sandbox's HOME holds Claude Code's settings; the app keeps its own.
const app = await startApp({ prepare });
try {
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
  await app.execute("location.hash = '#/routes'");
  await app.waitForText("[data-route]");
  for (const [label, width, height] of [
    ["desktop", 1280, 820],
    ["phone", 390, 844],
  ]) {
    await app.cmd("POST", "/window/rect", { width, height });
    await app.execute("location.hash = '#/routes'");
    await sleep(500);
    const shown = shot === "continue" ? "[data-testid=continuation-dialog]" : "[data-testid=transcript]";
    await app.execute(`document.querySelector("[data-route]").click()`);
    await (shot === "continue" ? continuation() : transcript());
    await sleep(500);
    // The first picture of a window can be a stale frame (the page as it
    // first loaded): the second is the page as it is.
    await app.screenshot();
    const png = await app.screenshot();
    if (!(await app.execute("return document.querySelector(arguments[0]) !== null", [shown])))
      throw new Error(`${shot}-${label}: ${shown} is not on screen`);
    const file = join(out, `${shot}-${label}.png`);
    writeFileSync(file, png);
    console.log(`saved ${file}`);
  }
} finally {
  await app.stop();
}
