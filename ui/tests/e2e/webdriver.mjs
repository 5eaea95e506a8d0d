// Minimal W3C WebDriver client over fetch, enough to drive the real Recourse
// window through tauri-driver (which forwards to WebKitWebDriver).
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const repoRoot = resolve(import.meta.dirname, "../../..");
export const appBinary =
  process.env.RECOURSE_APP_BINARY ??
  join(process.env.CARGO_TARGET_DIR ?? join(repoRoot, "target"), "debug/recourse-app");

/**
 * Starts tauri-driver with a fresh database and returns a session handle.
 * `prepare(dbPath, dir)` runs first, to seed the database.
 */
/**
 * The app processes running on `dbPath`: only this test's, though another
 * Recourse (a developer's, another checkout's tests) may run beside it.
 */
export function appProcesses(dbPath) {
  const mine = `RECOURSE_DB=${dbPath}\0`;
  return readdirSync("/proc")
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        return (
          readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "recourse-app" &&
          readFileSync(`/proc/${pid}/environ`, "latin1").includes(mine)
        );
      } catch {
        return false; // gone meanwhile, or not ours to read
      }
    });
}

export async function startApp({ port = 4444 + Math.floor(Math.random() * 500), env = {}, prepare } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "recourse-e2e-"));
  const dbPath = join(dir, "recourse.db");
  if (prepare) await prepare(dbPath, dir);
  const driver = spawn("tauri-driver", ["--port", String(port), "--native-port", String(port + 1000)], {
    env: { ...process.env, RECOURSE_DB: dbPath, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, ...env },
    stdio: ["ignore", "inherit", "inherit"],
    // Its own process group: the driver, WebKitWebDriver and the app, so
    // `stop` can tell whether anything outlived the session.
    detached: true,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForDriver(base);
  const created = await call(base, "POST", "/session", {
    capabilities: { alwaysMatch: { "tauri:options": { application: appBinary } } },
  });
  const session = new Session(base, created.sessionId, driver, dir, dbPath);
  /** The environment the app runs with, for a second launch. */
  session.env = { ...process.env, RECOURSE_DB: dbPath, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, ...env };
  return session;
}

async function waitForDriver(base) {
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`${base}/status`);
      if (r.ok) return;
    } catch {
      /* not listening yet */
    }
    await sleep(100);
  }
  throw new Error(`tauri-driver did not start at ${base}`);
}

async function call(base, method, path, body) {
  const r = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${JSON.stringify(json.value)}`);
  return json.value;
}

export class Session {
  constructor(base, id, driver, dir, dbPath) {
    Object.assign(this, { base, id, driver, dir, dbPath });
  }
  cmd(method, path, body) {
    return call(this.base, method, `/session/${this.id}${path}`, body);
  }
  /** Waits until `css` matches and `predicate(text)` holds; returns the text. */
  async waitForText(css, predicate = (t) => t.length > 0, timeoutMs = 15000) {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      // Read through the DOM: WebKitWebDriver's element-text endpoint can
      // report "" for a window Xvfb has not mapped as visible.
      const text = await this.execute(
        "const el = document.querySelector(arguments[0]); return el ? el.textContent : null;",
        [css],
      );
      if (text !== null) {
        last = text;
        if (predicate(last)) return last;
      }
      await sleep(150);
    }
    throw new Error(`timed out waiting for ${css}; last text: ${JSON.stringify(last)}`);
  }
  /** The text of the first element matching `css` (null: none). */
  text(css) {
    return this.execute("const el = document.querySelector(arguments[0]); return el ? el.textContent : null;", [css]);
  }
  /** Sets a field's value the way typing does (an `input` event follows). */
  async type(css, text) {
    const ok = await this.execute(
      `const el = document.querySelector(arguments[0]); if (!el) return false;
       el.focus(); el.value = arguments[1]; el.dispatchEvent(new Event("input", { bubbles: true })); return true;`,
      [css, text],
    );
    if (!ok) throw new Error(`no element matches ${css}`);
  }
  /** Clicks the first element matching `css` whose trimmed text is `label`; false when none does. */
  clickByText(css, label) {
    return this.execute(
      `const el = [...document.querySelectorAll(arguments[0])].find((e) => e.textContent.trim() === arguments[1]);
       if (!el) return false; el.click(); return true;`,
      [css, label],
    );
  }
  execute(script, args = []) {
    return this.cmd("POST", "/execute/sync", { script, args });
  }
  /** Runs `script` in the page; it answers by calling its last argument. */
  executeAsync(script, args = []) {
    return this.cmd("POST", "/execute/async", { script, args });
  }
  async screenshot() {
    return Buffer.from(await this.cmd("GET", "/screenshot"), "base64");
  }
  async stop() {
    try {
      await this.cmd("DELETE", "");
    } catch {
      /* session already gone */
    }
    this.driver.kill("SIGTERM");
    await new Promise((r) => (this.driver.exitCode !== null ? r() : this.driver.once("exit", r)));
    // The app should end once its window is closed; now and then (seen
    // under load, cause not found yet) it outlives the session. Whatever is
    // left of the group after a grace period is stopped, and said, so no
    // run hangs on it.
    const alive = () => {
      try {
        process.kill(-this.driver.pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
    if (alive()) {
      console.error("webdriver: the app outlived its session by 10 s; stopping it");
      process.kill(-this.driver.pid, "SIGKILL");
      for (let i = 0; i < 20 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Answers the native GTK file dialog whose title matches `title` as a person
 * would: pastes `path` into its location field and presses Enter (xdotool
 * and xclip on the same Xvfb display; pasting, because the field completes
 * names while one types).
 */
export function answerFileDialog(title, path) {
  // xclip serves the clipboard until it is stopped; it is stopped at the end.
  const script = `set -e
    printf %s '${path}' | xclip -quiet -selection clipboard >/dev/null 2>&1 &
    clip=$!
    trap 'kill $clip 2>/dev/null || true' EXIT
    id=$(xdotool search --sync --onlyvisible --name '${title}' | head -1)
    xdotool windowactivate --sync "$id" || true
    sleep 0.5
    xdotool key ctrl+l
    sleep 0.3
    xdotool key ctrl+a ctrl+v
    sleep 0.3
    xdotool key Return`;
  return new Promise((resolve, reject) => {
    execFile("bash", ["-c", script], { timeout: 30000 }, (e, _out, err) =>
      e ? reject(new Error(`${e.message}: ${err}`)) : resolve(),
    );
  });
}
