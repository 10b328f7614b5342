/**
 * Seeded randomness for the simulator. Every random draw in a scenario (arrivals, service times,
 * jitter, the limiter's own `random`) comes from a `Random` derived from the scenario's seed, so a
 * seed reproduces a run byte for byte (adr/0050-deterministic-simulation.md).
 *
 * The generator is xoshiro128** (Blackman and Vigna, 2018): 128 bits of state, 32-bit output,
 * four words of integer arithmetic per draw, no allocation. Streams are split with splitmix32, so
 * adding a draw to one model (say the upstream) does not shift every other model's numbers.
 */
export class Random {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  /** Box-Muller yields two normals per pair of uniforms; the second waits here (NaN: none). */
  private spareNormal = NaN;

  constructor(seed: number) {
    let x = seed >>> 0;
    const next = (): number => {
      // splitmix32: spreads a small seed over the whole state (no all-zero state possible).
      x = (x + 0x9e3779b9) | 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
  }

  /** A uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const s0 = this.s0;
    const s1 = this.s1;
    const s2 = this.s2;
    const s3 = this.s3;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    const n2 = s2 ^ s0;
    const n3 = s3 ^ s1;
    this.s1 = s1 ^ n2;
    this.s0 = s0 ^ n3;
    this.s2 = n2 ^ t;
    this.s3 = rotl(n3, 11);
    return result;
  }

  /** A uniform number in [0, 1) with 32 bits of resolution. */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** A uniform number in (0, 1]: safe under a logarithm. */
  nextOpen(): number {
    return (this.nextUint32() + 1) / 4294967296;
  }

  /** A standard normal deviate (Box-Muller, the spare kept for the next call). */
  normal(): number {
    const spare = this.spareNormal;
    if (spare === spare) {
      this.spareNormal = NaN;
      return spare;
    }
    const radius = Math.sqrt(-2 * Math.log(this.nextOpen()));
    const angle = 2 * Math.PI * this.next();
    this.spareNormal = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  }

  /** An exponential deviate with the given mean. */
  exponential(mean: number): number {
    return -mean * Math.log(this.nextOpen());
  }

  /** A new independent stream, derived from this one's next draw and a label. */
  fork(label: number): Random {
    return new Random((this.nextUint32() ^ Math.imul(label + 1, 0x9e3779b1)) >>> 0);
  }

  /** A function in the shape `limiter({ random })` takes. */
  asFunction(): () => number {
    return () => this.next();
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** Parses a seed given as decimal or 0x-hex (how a failure prints it) into a uint32. */
export function parseSeed(text: string): number {
  const value = text.startsWith('0x') || text.startsWith('0X') ? Number.parseInt(text.slice(2), 16) : Number(text);
  if (!Number.isFinite(value) || value < 0 || value > 0xffffffff || !Number.isInteger(value)) {
    throw new RangeError(`sim: a seed is a uint32 in decimal or 0x-hex; received ${JSON.stringify(text)}`);
  }
  return value >>> 0;
}

export function formatSeed(seed: number): string {
  return `0x${(seed >>> 0).toString(16).padStart(8, '0')}`;
}
