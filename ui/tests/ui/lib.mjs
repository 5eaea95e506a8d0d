// Opens the mocked-backend build (tests/ui/.dist, made by `vite build -c
// vite.harness.config.ts`) in headless Chromium on a loopback server.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import { chromium } from "playwright-core";

const dist = resolve(import.meta.dirname, ".dist");
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml" };

function serve() {
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const file = join(dist, path === "/" ? "index.html" : path);
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

/**
 * Starts the app with `scenario` (see harness/fake-backend.ts) at the given
 * viewport; returns { page, close }. `hash` picks the area (`#/profiles`).
 */
export async function openApp(scenario = {}, { width = 1280, height = 820, hash = "#/routes" } = {}) {
  // Playwright gives the browser a fresh temporary profile of its own.
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const server = await serve();
  const close = async () => {
    await browser.close();
    server.close();
  };
  try {
    return await load(browser, server, scenario, { width, height, hash }, close);
  } catch (err) {
    await close();
    throw err;
  }
}

async function load(browser, server, scenario, { width, height, hash }, close) {
  const page = await browser.newPage({ viewport: { width, height } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.addInitScript((s) => {
    window.__SCENARIO__ = s;
  }, scenario);
  const { port } = server.address();
  await page.goto(`http://127.0.0.1:${port}/${hash}`);
  await page.waitForSelector("[data-testid=app-ready]", { state: "attached" });
  return {
    page,
    errors,
    /** Commands the UI sent, in order. */
    calls: () => page.evaluate(() => window.__CALLS__),
    /** Emits a backend event as the Rust side would. */
    emit: (name, payload) => page.evaluate(([n, p]) => window.__EMIT__(n, p), [name, payload]),
    close,
  };
}

/** Fails when the page scrolls sideways or any element sticks out of it. */
export async function horizontalOverflow(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const over = [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > width + 1 && el.getClientRects().length > 0)
      .map((el) => `${el.tagName.toLowerCase()}${el.className ? "." + String(el.className).split(" ")[0] : ""}`);
    return { scrollWidth: document.documentElement.scrollWidth, width, over: over.slice(0, 10) };
  });
}

/**
 * The options of `select` (a locator) too wide for its closed box: a select
 * cannot wrap, so what does not fit is cut off unseen. Measured with the
 * select's own font; `room` leaves out its padding and drop-down arrow.
 */
export async function clippedOptions(select) {
  return select.evaluate((el) => {
    const style = getComputedStyle(el);
    const ruler = document.createElement("span");
    ruler.style.font = style.font;
    ruler.style.whiteSpace = "pre";
    document.body.append(ruler);
    const arrow = 24;
    const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - arrow;
    const cut = [...el.options]
      .map((o) => {
        ruler.textContent = o.text;
        return `${o.text} (${Math.ceil(ruler.getBoundingClientRect().width)} px)`;
      })
      .filter((text, i) => {
        ruler.textContent = el.options[i].text;
        return ruler.getBoundingClientRect().width > room;
      });
    ruler.remove();
    return { cut, room: Math.floor(room) };
  });
}

/** Visible interactive elements smaller than 44×44 px. */
export async function smallTargets(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll("button, a[href], input:not([type=hidden]), select, [role=button], summary")]
      .filter((el) => el.getClientRects().length > 0)
      .map((el) => ({ el, r: el.getBoundingClientRect() }))
      .filter(({ r }) => r.width > 0 && (r.width < 44 || r.height < 44))
      .map(
        ({ el, r }) =>
          `${el.tagName.toLowerCase()} "${(el.textContent || el.getAttribute("aria-label") || "").trim().slice(0, 30)}" ${Math.round(r.width)}×${Math.round(r.height)}`,
      ),
  );
}

/** Elements other than <main> that scroll: the page must have one scroll owner. */
export async function scrollOwners(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll("*")]
      .filter((el) => {
        const s = getComputedStyle(el);
        return /(auto|scroll)/.test(s.overflowY) && el.scrollHeight > el.clientHeight + 1;
      })
      .map((el) => el.tagName.toLowerCase() + (el.id ? `#${el.id}` : "")),
  );
}

/** The widths every "nothing moves" test measures at: desktop and phone. */
export const VIEWPORTS = [
  ["desktop", { width: 1280, height: 820 }],
  ["phone", { width: 390, height: 844 }],
];

/** A viewport box, rounded: where a control is under the pointer. */
export async function at(locator) {
  const { x, y, width, height } = await locator.boundingBox();
  return { x: Math.round(x), y: Math.round(y), width: Math.round(width), height: Math.round(height) };
}

/** Holds every route_action reply until the page calls `window.__RELEASE__()`. */
export async function holdRouteActions(page) {
  await page.evaluate(() => {
    const ipc = window.__TAURI_INTERNALS__;
    const invoke = ipc.invoke;
    let release;
    window.__HOLD__ = new Promise((ok) => (release = ok));
    window.__RELEASE__ = () => release();
    ipc.invoke = async (cmd, args, opts) => {
      if (cmd === "route_action") await window.__HOLD__;
      return invoke(cmd, args, opts);
    };
  });
}
