/**
 * mulberry32 (Tommy Ettinger, public domain): a tiny seeded PRNG, uniform in [0, 1). 32 bits of
 * state, good enough for test traffic and jitter; written from the published constants. The one
 * copy every test helper uses (the simulator has its own xoshiro128**, sim/engine/random.ts).
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
