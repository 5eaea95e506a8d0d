// Light and dark: the system preference is followed, the Settings override
// wins and is remembered, and both themes pass WCAG AA contrast on the text
// and controls as actually rendered, across the views.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { accountsOverview, demoProfile } from "./fixtures.mjs";

const theme = (page) => page.evaluate(() => document.documentElement.dataset.theme);

test("the theme follows the system, and a Settings choice overrides it and is remembered", async () => {
  const app = await openApp({}, { hash: "#/settings" });
  try {
    await app.page.emulateMedia({ colorScheme: "light" });
    assert.equal(await theme(app.page), "light");
    await app.page.emulateMedia({ colorScheme: "dark" });
    await app.page.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    const light = app.page.getByRole("radio", { name: "Light" });
    await light.click();
    assert.equal(await theme(app.page), "light", "the override wins over a dark system");
    await app.page.reload();
    await app.page.waitForSelector("[data-testid=app-ready]", { state: "attached" });
    assert.equal(await theme(app.page), "light", "remembered across a restart of the window");
    assert.equal(await light.getAttribute("aria-checked"), "true");
    await app.page.getByRole("radio", { name: "System" }).click();
    assert.equal(await theme(app.page), "dark", "System follows the (dark) system again");
  } finally {
    await app.close();
  }
});

/**
 * Every visible text (and input value) with its effective background, and
 * every control edge (input borders, switch tracks) against what surrounds
 * it; returns those below AA: 4.5:1 for text, 3:1 for large text and for
 * control edges. Disabled controls are exempt, as WCAG says.
 */
function belowAA() {
  const rgba = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1]
      .split(/[\s,/]+/)
      .filter(Boolean)
      .map(Number);
    return { r, g, b, a };
  };
  const over = (top, under) => ({
    r: top.r * top.a + under.r * (1 - top.a),
    g: top.g * top.a + under.g * (1 - top.a),
    b: top.b * top.a + under.b * (1 - top.a),
    a: 1,
  });
  /** The colour behind `el`: its own and its ancestors' backgrounds, composed. */
  const backdrop = (el, includeSelf = true) => {
    const layers = [];
    for (let e = includeSelf ? el : el.parentElement; e; e = e.parentElement) {
      const bg = rgba(getComputedStyle(e).backgroundColor);
      if (bg && bg.a > 0) {
        layers.push(bg);
        if (bg.a === 1) break;
      }
    }
    return layers.reduceRight((under, top) => over(top, under), { r: 255, g: 255, b: 255, a: 1 });
  };
  const lum = ({ r, g, b }) => {
    const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return false;
    if (el.closest("[hidden], .sr-only, [aria-hidden=true]")) return false;
    const s = getComputedStyle(el);
    return s.visibility !== "hidden" && s.display !== "none";
  };
  const disabled = (el) => !!el.closest(":disabled, [aria-disabled=true]");
  const name = (el) =>
    `${el.tagName.toLowerCase()}${el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : ""} “${(el.value ?? el.textContent).trim().slice(0, 40)}”`;
  const failures = [];
  for (const el of document.querySelectorAll("body *")) {
    if (!visible(el) || disabled(el)) continue;
    const s = getComputedStyle(el);
    const field = el.matches("input:not([type=checkbox]):not([type=radio]), select, textarea");
    const ownText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== "");
    if (ownText || (field && el.value)) {
      const size = parseFloat(s.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(s.fontWeight) >= 700);
      const need = large ? 3 : 4.5;
      const fg = rgba(s.color);
      const bg = backdrop(el);
      const got = ratio(over(fg, bg), bg);
      if (got < need) failures.push(`text ${name(el)}: ${got.toFixed(2)} < ${need}`);
    }
    if (field || el.matches(".track")) {
      const edge = field ? rgba(s.borderTopColor) : rgba(s.backgroundColor);
      const around = backdrop(el, false);
      const got = ratio(over(edge, around), around);
      if (got < 3) failures.push(`control ${name(el)}: ${got.toFixed(2)} < 3`);
    }
  }
  return failures;
}

/** Opens each view with representative content and collects AA failures. */
async function auditViews(app) {
  const page = app.page;
  const found = {};
  const audit = async (view) => (found[view] = await page.evaluate(belowAA));
  const go = async (area) => {
    await page.evaluate((a) => (location.hash = `#/${a}`), area);
    await page
      .locator(`nav [aria-current=page]`)
      .filter({ hasText: new RegExp(area, "i") })
      .waitFor();
  };

  await go("routes");
  await page.locator("#run-prompt").fill("Tidy the changelog");
  await page.getByRole("button", { name: "Start run" }).click();
  await page.locator(".badge").first().waitFor({ state: "attached" });
  await audit("routes");

  await go("profiles");
  await page.getByRole("button", { name: "Edit policy" }).first().click();
  const retries = page.locator("[data-testid=section-transient]").getByLabel("Retries", { exact: true });
  await retries.fill("0");
  await page.getByText("must be 1–10 when enabled (0 is too few)").waitFor();
  await page.getByTestId("candidate-row").nth(1).getByRole("switch", { name: "Enabled" }).click();
  await audit("profiles (errors, disabled row, unsaved)");
  await page.getByRole("button", { name: "Discard" }).click();

  await go("accounts");
  await page.locator("[data-testid=account]").first().waitFor();
  await audit("accounts");

  await go("catalogue");
  await audit("catalogue");

  await go("settings");
  await page.getByRole("radio", { name: "Ask each time" }).waitFor();
  await audit("settings");
  await app.emit("close-requested", {
    counts: { needs_you: 0, waiting: 1, running: 0 },
    quit_warning: "1 route is waiting. It is kept with its deadline.",
    unsaved: null,
    then: null,
  });
  await page.getByTestId("close-dialog").waitFor();
  await audit("close dialog");
  return found;
}

for (const scheme of ["light", "dark"]) {
  for (const width of [1280, 390]) {
    test(`the ${scheme} theme passes WCAG AA contrast in every view at ${width} px`, async () => {
      const scenario = { profiles: [demoProfile()], accounts: accountsOverview() };
      const app = await openApp(scenario, { hash: "#/routes", width, height: 844 });
      try {
        await app.page.emulateMedia({ colorScheme: scheme });
        await app.page.waitForFunction((s) => document.documentElement.dataset.theme === s, scheme);
        const found = await auditViews(app);
        const failing = Object.fromEntries(Object.entries(found).filter(([, f]) => f.length > 0));
        assert.deepEqual(failing, {}, "every text/background pair and control edge meets AA");
      } finally {
        await app.close();
      }
    });
  }
}
