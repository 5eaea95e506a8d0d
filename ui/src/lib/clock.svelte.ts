// A shared wall clock that ticks once a second, so every countdown on the
// page updates together. Countdowns are derived from absolute deadlines the
// backend stores; the browser never dispatches anything when one reaches 0.
let now = $state(Date.now());
let timer: ReturnType<typeof setInterval> | undefined;

export const clock = {
  /**
   * The time now, read afresh: the tick only makes a reader recompute. A
   * tick's own timestamp is up to a second old when a new deadline arrives
   * between ticks (or, before the first tick, as old as the page), which
   * made a fresh 5 s countdown read 6 s.
   */
  get now() {
    if (timer === undefined) timer = setInterval(() => (now = Date.now()), 1000);
    return Math.max(now, Date.now());
  },
};
