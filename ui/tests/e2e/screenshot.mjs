// Saves desktop (1280x820) and phone (390x844) screenshots of the real app
// window, driven through tauri-driver. Usage: node screenshot.mjs OUT_DIR
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApp } from "./webdriver.mjs";

const out = resolve(process.argv[2] ?? "docs/screenshots");
mkdirSync(out, { recursive: true });
const views = (process.env.RECOURSE_SCREENSHOT_VIEWS ?? "routes,profiles,catalogue").split(",");
const app = await startApp();
try {
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
  for (const [label, width, height] of [["desktop", 1280, 820], ["phone", 390, 844]]) {
    await app.cmd("POST", "/window/rect", { width, height });
    for (const view of views) {
      await app.execute(`location.hash = '#/${view}'`);
      await sleep(800);
      const file = join(out, `${view}-${label}.png`);
      writeFileSync(file, await app.screenshot());
      console.log(`saved ${file}`);
    }
  }
} finally {
  await app.stop();
}
