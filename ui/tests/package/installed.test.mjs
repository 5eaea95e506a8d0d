// Run by scripts/test-package.sh with RECOURSE_APP_BINARY set to the binary the
// Debian package installed: that binary, on a fresh database, serves the built
// UI from inside itself and shows the seeded demo profile.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { appBinary, startApp } from "../e2e/webdriver.mjs";

let app;
before(async () => {
  assert.ok(process.env.RECOURSE_APP_BINARY, "set RECOURSE_APP_BINARY to the installed binary");
  app = await startApp();
  await app.waitForText("[data-testid=app-ready]", () => true, 30000);
});
after(async () => {
  await app?.stop();
});

test(`the installed binary (${appBinary}) renders the demo profile`, async () => {
  const title = await app.cmd("GET", "/title");
  assert.equal(title, "Recourse");
  await app.execute("location.hash = '#/profiles'");
  const names = await app.waitForText(".profiles", (t) => t.includes("Demo (simulated)"));
  assert.match(names, /3 candidates/);
});
