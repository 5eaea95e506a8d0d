// The timeline's horizontal scale: time to pixels, piece by piece. A route
// that waited ten minutes for a person between two five-second attempts
// drawn to one linear scale leaves the attempts as slivers, so the longest
// stretches between attempts are cut short ("broken", drawn at a fixed
// width that says how long they were) until every attempt keeps a readable
// width. Inside a piece time stays linear, so a moving "now" line crosses a
// broken wait at an even pace and reaches its deadline marker on time.

/** A stretch of time: an attempt, or time between attempts and why (`label`). */
export type Span = { from: number; to: number; kind: "attempt" | "gap"; label: string | null };

/** A piece of the axis between two consecutive instants of the spans. */
export type Piece = {
  from: number;
  to: number;
  /** What covers it: an attempt, a gap, or nothing recorded. */
  kind: "attempt" | "gap" | "idle";
  label: string | null;
  x: number;
  width: number;
  /** Drawn shorter than its time, at `BREAK_PX` or wider when the track has room to spare. */
  broken: boolean;
};

export type Scale = {
  pieces: Piece[];
  /** The drawn width: the track's, or more when the attempts' minimum widths do not fit in it. */
  width: number;
  /** Where instant `t` (ms) is drawn, in px from the left. */
  x: (t: number) => number;
};

/** The narrowest an attempt is drawn. */
export const MIN_ATTEMPT_PX = 24;
/** The width of a broken stretch: room for its duration and reason written under it. */
export const BREAK_PX = 96;

/** Lays `spans` out between `start` and `end` (ms) on a track `width` px wide. */
export function layout(spans: Span[], start: number, end: number, width: number): Scale {
  const cuts = [
    ...new Set([start, end, ...spans.flatMap((s) => [s.from, s.to])].filter((t) => t >= start && t <= end)),
  ].sort((a, b) => a - b);
  const pieces: Piece[] = [];
  for (let i = 1; i < cuts.length; i++) {
    const [from, to] = [cuts[i - 1], cuts[i]];
    const mid = (from + to) / 2;
    const covering = spans.filter((s) => s.from <= mid && mid <= s.to);
    const cover = covering.find((s) => s.kind === "attempt") ?? covering[0];
    pieces.push({
      from,
      to,
      kind: cover?.kind ?? "idle",
      label: cover?.label ?? null,
      x: 0,
      width: 0,
      broken: false,
    });
  }
  const d = (p: Piece) => p.to - p.from;

  // Break the longest stretch between attempts while an attempt is drawn
  // narrower than the minimum and breaking would shorten that stretch.
  for (;;) {
    const fixed = pieces.filter((p) => p.broken).length * BREAK_PX;
    const linear = pieces.filter((p) => !p.broken);
    const k =
      Math.max(0, width - fixed) /
      Math.max(
        1,
        linear.reduce((sum, p) => sum + d(p), 0),
      );
    if (linear.every((p) => p.kind !== "attempt" || d(p) * k >= MIN_ATTEMPT_PX)) break;
    const longest = linear.filter((p) => p.kind !== "attempt" && d(p) * k > BREAK_PX).sort((a, b) => d(b) - d(a))[0];
    if (!longest) break;
    longest.broken = true;
  }

  // Attempts still too narrow get the minimum; the rest share what is left,
  // but no stretch drawn to scale is wider than a cut one: a 0.3 s attempt
  // before a cut 12 s wait must not fill the track while the wait is a notch.
  // The cut stretches take the width that frees.
  const broken = pieces.filter((p) => p.broken);
  const longest = Math.max(0, ...pieces.filter((p) => !p.broken).map(d));
  const kMax = broken.length > 0 && longest > 0 ? BREAK_PX / longest : Infinity;
  const floored = new Set<Piece>();
  let k = 0;
  for (;;) {
    const fixed = broken.length * BREAK_PX + floored.size * MIN_ATTEMPT_PX;
    const rest = pieces.filter((p) => !p.broken && !floored.has(p));
    k = Math.min(
      kMax,
      Math.max(0, width - fixed) /
        Math.max(
          1,
          rest.reduce((sum, p) => sum + d(p), 0),
        ),
    );
    const narrow = rest.filter((p) => p.kind === "attempt" && d(p) * k < MIN_ATTEMPT_PX);
    if (narrow.length === 0) break;
    for (const p of narrow) floored.add(p);
  }
  const scaled = (p: Piece) => (floored.has(p) ? MIN_ATTEMPT_PX : d(p) * k);
  const drawnToScale = pieces.filter((p) => !p.broken).reduce((sum, p) => sum + scaled(p), 0);
  const cutWidth = Math.max(BREAK_PX, (width - drawnToScale) / Math.max(1, broken.length));
  let x = 0;
  for (const p of pieces) {
    p.x = x;
    p.width = p.broken ? cutWidth : scaled(p);
    x += p.width;
  }
  const drawn = Math.max(width, x);
  return {
    pieces,
    width: drawn,
    x(t: number) {
      if (pieces.length === 0 || t <= start) return 0;
      const p = pieces.find((p) => t <= p.to);
      if (!p) return x;
      return p.x + (d(p) > 0 ? ((t - p.from) / d(p)) * p.width : 0);
    },
  };
}
