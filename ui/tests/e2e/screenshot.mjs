// Saves desktop (1280x820) and phone (390x844) screenshots of the real app
// window, light (`routes-desktop.png`) and dark (`routes-desktop-dark.png`),
// driven through tauri-driver. Usage: node screenshot.mjs OUT_DIR
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApp } from "./webdriver.mjs";

const out = resolve(process.argv[2] ?? "docs/screenshots");
mkdirSync(out, { recursive: true });
const views = (process.env.RECOURSE_SCREENSHOT_VIEWS ?? "routes,profiles,accounts,catalogue,settings").split(",");
const app = await startApp();
try {
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
  // Start a demo run so the routes view shows a live wait with its countdown.
  await app.execute("location.hash = '#/routes'");
  await app.waitForText("[data-testid=start-run]");
  // The demo profile is chosen once the profiles are read (the engine opens behind the first list).
  await app.waitForText("#run-profile", (t) => t.includes("Demo"), 30000);
  await app.type("#run-prompt", "Add retries to the HTTP client and cover them with tests");
  await app.execute(
    "[...document.querySelectorAll('[data-testid=start-run] button')].find((b) => b.textContent.trim() === 'Start run').click()",
  );
  // Left alone the demo waits for a reset, retries, skips and stops at the
  // safety gate: its route then shows all of that in its timeline.
  await app.waitForText("[data-testid=detail-manual-reason]", (t) => /not safe/.test(t), 120000);
  for (const theme of ["light", "dark"]) {
    // Through the Settings override, as a person would pick it.
    await app.execute("location.hash = '#/settings'");
    await app.waitForText("#settings-heading");
    await app.execute(
      "[...document.querySelectorAll('[role=radio]')].find((b) => b.textContent.trim() === arguments[0]).click()",
      [theme === "light" ? "Light" : "Dark"],
    );
    for (const [label, width, height] of [
      ["desktop", 1280, 820],
      ["phone", 390, 844],
    ]) {
      await app.cmd("POST", "/window/rect", { width, height });
      for (const view of views) {
        await app.execute(`location.hash = '#/${view}'`);
        await sleep(800);
        const file = join(out, `${view}-${label}${theme === "dark" ? "-dark" : ""}.png`);
        writeFileSync(file, await app.screenshot());
        console.log(`saved ${file}`);
        if (view === "routes") {
          // The route's timeline and attempts, below the fold of the detail.
          await app.execute(
            "document.querySelector('[data-testid=route-timeline]')?.scrollIntoView({ block: 'start' })",
          );
          await sleep(400);
          const more = join(out, `timeline-${label}${theme === "dark" ? "-dark" : ""}.png`);
          writeFileSync(more, await app.screenshot());
          console.log(`saved ${more}`);
          await app.execute("document.querySelector('main').scrollTo(0, 0)");
        }
      }
    }
  }
} finally {
  await app.stop();
}
