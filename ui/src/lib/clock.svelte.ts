// A shared wall clock that ticks once a second, so every countdown on the
// page updates together. Countdowns are derived from absolute deadlines the
// backend stores; the browser never dispatches anything when one reaches 0.
let now = $state(Date.now());
let timer: ReturnType<typeof setInterval> | undefined;

export const clock = {
  get now() {
    if (timer === undefined) timer = setInterval(() => (now = Date.now()), 1000);
    return now;
  },
};
