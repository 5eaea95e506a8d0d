// Saves screenshots of a route's transcript in the real app window: a real
// `recourse run` of the pinned Claude Code at access `edit`, inside the
// sandbox of tests/live/sandbox.sh (its loopback mock answers `write_file`:
// the model asks to write a file), then the app opened on that database
// with the route's first attempt unfolded. Run by scripts/screenshot-transcript.sh
// inside the sandbox. Usage: node screenshot-transcript.mjs OUT_DIR
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { repoRoot, startApp } from "./webdriver.mjs";

const out = resolve(process.argv[2] ?? "docs/screenshots");
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
  const answer = execFileSync(
    recourse,
    [
      "run",
      "--profile",
      "Claude Code",
      "--prompt",
      "Leave a note for the team in recourse-note.txt",
      "--cwd",
      workdir,
      "--db",
      db,
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  console.log(`recourse run answered: ${answer.trim()}`);
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
    await app.execute(`document.querySelector("[data-route]").click()`);
    await app.waitForText("[data-testid=attempt-agent] summary");
    await app.execute(`
      const d = document.querySelector("[data-testid=attempt-agent] details");
      d.open = true;
      d.scrollIntoView({ block: "start" });`);
    await app.waitForText("[data-testid=transcript]");
    await sleep(500);
    const file = join(out, `transcript-${label}.png`);
    writeFileSync(file, await app.screenshot());
    console.log(`saved ${file}`);
  }
} finally {
  await app.stop();
}
