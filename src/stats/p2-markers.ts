/**
 * The P² algorithm's state and steps as functions over one Float64Array, so P2Quantile and
 * WindowQuantile can keep it in whatever buffer they already own (WindowQuantile reuses the
 * first slots of its exact buffer once it switches, saving a typed array per key: each costs
 * ~190 bytes of V8 headers on top of its contents, see docs/quantiles.md).
 *
 * R. Jain and I. Chlamtac, "The P² algorithm for dynamic calculation of quantiles and
 * histograms without storing observations", CACM 28(10), 1985. Layout: slots 0-4 hold the
 * marker heights, slots 5-9 the actual marker positions (1-based ranks, integers as doubles).
 * Marker 0 is the minimum, 4 the maximum, 2 the target quantile q, 1 and 3 sit at q/2 and
 * (1 + q)/2. All functions here assume at least five values have been seen.
 */

export const P2_MARKERS = 5;
/** Slots a marker buffer needs: five heights and five positions. */
export const P2_SLOTS = 2 * P2_MARKERS;
const POSITION = P2_MARKERS; // offset of the positions in the buffer
/**
 * The slot after the markers, where a caller puts the value `addToMarkers` adds. Handed over in
 * the buffer, not as an argument: V8 declines to inline `addToMarkers` (its bytecode is over the
 * inlining limit), and a double passed to a call it does not inline is boxed, 16 bytes per value
 * (issue 16's allocation guard). A buffer for `addToMarkers` has at least P2_INPUT + 1 slots.
 */
export const P2_INPUT = 2 * P2_MARKERS; // the slot right after the markers (P2_SLOTS of them)

/** The P² estimate: the middle marker's height. */
export function markerEstimate(markers: Float64Array): number {
  return markers[2] as number;
}

/**
 * Adds x = markers[P2_INPUT] to markers that summarise `countBefore` (>= 5) values. Desired
 * positions come straight from n: n'_i = 1 + (n - 1) dn_i. The paper accumulates dn_i on every add
 * instead; recomputing avoids the drift that accumulation builds up over long runs.
 */
export function addToMarkers(markers: Float64Array, countBefore: number, quantile: number): void {
  const x = markers[P2_INPUT] as number;
  // Find the cell k with height[k] <= x < height[k + 1], stretching the extremes if needed.
  let cell: number;
  if (x < (markers[0] as number)) {
    markers[0] = x;
    cell = 0;
  } else if (x >= (markers[4] as number)) {
    markers[4] = x;
    cell = 3;
  } else {
    cell = 0;
    while (x >= (markers[cell + 1] as number)) cell++;
  }
  for (let marker = cell + 1; marker < P2_MARKERS; marker++) {
    markers[POSITION + marker] = (markers[POSITION + marker] as number) + 1;
  }
  const lastRank = countBefore; // (n - 1) for the new n = countBefore + 1
  // Each marker moves one position towards its desired position if it is at least one away and
  // has room. Written as one loop with no calls: V8 boxes a double passed to a call it does not
  // inline (16 bytes), and its inlining budget ran out here (bench/allocation-guard.ts).
  for (let marker = 1; marker <= 3; marker++) {
    const desired =
      marker === 1
        ? 1 + (lastRank * quantile) / 2
        : marker === 2
          ? 1 + lastRank * quantile
          : 1 + (lastRank * (1 + quantile)) / 2;
    const position = markers[POSITION + marker] as number;
    const gap = desired - position;
    const roomAbove = (markers[POSITION + marker + 1] as number) - position;
    const roomBelow = position - (markers[POSITION + marker - 1] as number);
    let step: number;
    if (gap >= 1 && roomAbove > 1) step = 1;
    else if (gap <= -1 && roomBelow > 1) step = -1;
    else continue;
    const below = markers[marker - 1] as number;
    const height = markers[marker] as number;
    const above = markers[marker + 1] as number;
    // Piecewise-parabolic prediction (the paper's P² formula for q_i').
    let next =
      height +
      (step / (roomAbove + roomBelow)) *
        (((roomBelow + step) * (above - height)) / roomAbove + ((roomAbove - step) * (height - below)) / roomBelow);
    if (!(below < next && next < above)) {
      // Linear fallback towards the neighbour in the direction of the move; the clamp keeps
      // heights ordered against rounding and overflow on extreme inputs.
      next = step === 1 ? height + (above - height) / roomAbove : height - (height - below) / roomBelow;
      if (next < below) next = below;
      else if (next > above) next = above;
    }
    markers[marker] = next;
    markers[POSITION + marker] = position + step;
  }
}

/**
 * Sets the markers to summarise `length` (>= 5) ascending values: each marker takes the exact
 * order statistic nearest its desired position. `markers` may be the same array as `sorted`
 * (everything is read before anything is written).
 */
export function seedMarkers(markers: Float64Array, sorted: ArrayLike<number>, length: number, quantile: number): void {
  const lastRank = length - 1;
  let rank1 = Math.round(1 + (lastRank * quantile) / 2);
  let rank2 = Math.round(1 + lastRank * quantile);
  let rank3 = Math.round(1 + (lastRank * (1 + quantile)) / 2);
  // Rounding can make neighbours collide for extreme quantiles; P² needs strictly increasing
  // positions, which length >= 5 always allows.
  rank1 = Math.max(rank1, 2);
  rank2 = Math.max(rank2, rank1 + 1);
  rank3 = Math.max(rank3, rank2 + 1);
  rank3 = Math.min(rank3, length - 1);
  rank2 = Math.min(rank2, rank3 - 1);
  rank1 = Math.min(rank1, rank2 - 1);
  const minimum = sorted[0] as number;
  const height1 = sorted[rank1 - 1] as number;
  const height2 = sorted[rank2 - 1] as number;
  const height3 = sorted[rank3 - 1] as number;
  const maximum = sorted[length - 1] as number;
  markers[0] = minimum;
  markers[1] = height1;
  markers[2] = height2;
  markers[3] = height3;
  markers[4] = maximum;
  markers[POSITION] = 1;
  markers[POSITION + 1] = rank1;
  markers[POSITION + 2] = rank2;
  markers[POSITION + 3] = rank3;
  markers[POSITION + 4] = length;
}
