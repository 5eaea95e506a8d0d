import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp, horizontalOverflow } from "./lib.mjs";
import { demoProfile } from "./fixtures.mjs";

test("navigation moves between areas and marks the current tab", async () => {
  const app = await openApp({}, { hash: "#/routes" });
  try {
    await app.page.getByRole("link", { name: "Catalogue" }).click();
    assert.equal(await app.page.locator("nav [aria-current=page]").textContent(), "Catalogue");
    assert.match(app.page.url(), /#\/catalogue$/, "the hash follows the area so reload keeps it");
    await app.page.keyboard.press("Shift+Tab");
    assert.deepEqual(app.errors, [], "no uncaught page errors");
  } finally {
    await app.close();
  }
});

test("frame has no horizontal overflow at phone width", async () => {
  const app = await openApp({}, { width: 390, height: 844 });
  try {
    const o = await horizontalOverflow(app.page);
    assert.ok(o.scrollWidth <= o.width, `page scrolls sideways: ${JSON.stringify(o)}`);
    const nav = await app.page.evaluate(() => {
      const n = document.querySelector("nav[aria-label=Main]");
      return { scrollWidth: n.scrollWidth, clientWidth: n.clientWidth, tabs: n.querySelectorAll("a").length };
    });
    assert.ok(nav.tabs >= 4, "every area has a tab");
    assert.ok(nav.scrollWidth <= nav.clientWidth, `the tabs scroll sideways: ${JSON.stringify(nav)}`);
  } finally {
    await app.close();
  }
});

test("the run form's profile choice is shown whole at 1280 px", async () => {
  const profile = { ...demoProfile(), name: "Nightly refactors (simulated)" };
  const app = await openApp({ profiles: [profile] }, { hash: "#/routes", width: 1280 });
  try {
    const select = app.page.locator("#run-profile");
    await select.selectOption({ index: 1 });
    const fit = await select.evaluate((s) => {
      const style = getComputedStyle(s);
      const ctx = document.createElement("canvas").getContext("2d");
      ctx.font = style.font;
      const text = ctx.measureText(s.selectedOptions[0].text).width;
      // The drop-down arrow takes about 24 px of the padding-box.
      const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 24;
      return { text: Math.ceil(text), room: Math.floor(room) };
    });
    assert.ok(fit.text <= fit.room, `“Nightly refactors (simulated) · 2 enabled” fits: ${JSON.stringify(fit)}`);
  } finally {
    await app.close();
  }
});
