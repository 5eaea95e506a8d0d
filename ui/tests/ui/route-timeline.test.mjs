// The route timeline at a glance: a long wait between short attempts is cut
// short on a broken axis that says how long it was and why, so no attempt
// becomes a sliver, and the now line still moves towards a pending deadline.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openApp } from "./lib.mjs";
import { routeSnapshot } from "./fixtures.mjs";

const iso = (msFromNow) => new Date(Date.now() + msFromNow).toISOString();

const routeWith = (id, state, timeline, extra = {}) => ({
  profiles: [],
  routes: [{ snapshot: routeSnapshot(id, state, { candidate_count: 2, ...extra }), attempts: [], timeline }],
});

/** Left edge and width of each element with `testid` in the timeline. */
const boxes = (t, testid) =>
  t.getByTestId(testid).evaluateAll((els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      return { x: r.x, width: r.width, right: r.right, text: e.textContent };
    }),
  );

/** Asserts no attempt bar is narrower than `min` px. */
async function everyAttemptAtLeast(t, min, why) {
  const bars = await boxes(t, "timeline-attempt");
  for (const b of bars) assert.ok(b.width >= min, `${why}: an attempt bar is ${b.width.toFixed(1)} px wide`);
}

test("a ten-minute wait for a person is cut short and labelled, and every attempt bar stays readable", async () => {
  const timeline = [
    { kind: "attempt", number: 1, candidate_name: "Claude", start: iso(-680e3), end: iso(-675e3), outcome: "failed" },
    { kind: "gap", start: iso(-675e3), end: iso(-75e3), due: null, why: "person", label: "waited for you" },
    { kind: "mark", at: iso(-75e3), label: "started again by you" },
    { kind: "attempt", number: 2, candidate_name: "Claude", start: iso(-75e3), end: iso(-70e3), outcome: "failed" },
    { kind: "gap", start: iso(-70e3), end: iso(-64e3), due: iso(-64e3), why: "retry", label: "retry 1 of 3 after 6 s" },
    { kind: "attempt", number: 3, candidate_name: "Claude", start: iso(-64e3), end: iso(-60e3), outcome: "succeeded" },
  ];
  for (const width of [1280, 390]) {
    const app = await openApp(routeWith(8, "succeeded", timeline), { width, height: 844 });
    try {
      await app.page.locator('[data-route="8"]').click();
      const t = app.page.getByTestId("route-timeline");
      await t.getByTestId("timeline-attempt").first().waitFor();
      // 5 s of a 620 s route on a linear scale is under 10 px even on a desktop.
      await everyAttemptAtLeast(t, 24, `at ${width} px`);
      const breaks = await boxes(t, "timeline-break");
      assert.equal(breaks.length, 1, "only the long wait is cut short; the 6 s retry keeps its scale");
      assert.match(breaks[0].text, /^10 min waited for you$/, "the cut says how long the wait was and why");
      const [gap] = (await boxes(t, "timeline-gap")).filter((g) => g.width > 20);
      assert.ok(
        Math.abs(breaks[0].x - gap.x) < 2,
        "the label sits under the wait it describes, not somewhere else on the axis",
      );
      const scroller = await t.locator(".scroller").evaluate((e) => [e.scrollWidth, e.clientWidth]);
      assert.ok(scroller[0] <= scroller[1] + 1, "three attempts and a cut fit the track without scrolling");
    } finally {
      await app.close();
    }
  }
});

test("the now line crosses a long pending reset wait at an even pace towards its deadline", async () => {
  // Waiting since 5 minutes ago, due in 5 minutes: half way through the wait.
  const timeline = [
    { kind: "attempt", number: 1, candidate_name: "Claude", start: iso(-305e3), end: iso(-300e3), outcome: "failed" },
    {
      kind: "gap",
      start: iso(-300e3),
      end: null,
      due: iso(300e3),
      why: "reset_wait",
      label: "waiting for the provider's reset",
    },
  ];
  const app = await openApp(routeWith(9, "waiting_reset", timeline, { deadline: iso(300e3) }), {
    width: 390,
    height: 844,
  });
  try {
    await app.page.locator('[data-route="9"]').click();
    const t = app.page.getByTestId("route-timeline");
    await t.getByTestId("timeline-attempt").waitFor();
    await everyAttemptAtLeast(t, 24, "beside a ten-minute wait");
    const [cut] = await boxes(t, "timeline-break");
    assert.match(cut.text, /^10 min waiting for the provider's reset$/);
    const [now] = await boxes(t, "timeline-now");
    const [deadline] = await boxes(t, "timeline-deadline");
    assert.ok(deadline.x > now.x, "the deadline is still ahead of the now line");
    const half = cut.x + cut.width / 2;
    assert.ok(
      Math.abs(now.x - half) < 8,
      `half way through the wait the now line is half way across its cut (${now.x.toFixed(1)} vs ${half.toFixed(1)})`,
    );
    assert.ok(Math.abs(deadline.x - cut.right) < 3, "the deadline is where the cut wait ends");
  } finally {
    await app.close();
  }
});
