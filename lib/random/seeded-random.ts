/**
 * Small deterministic random numbers for the simulator: the same seed gives the same frames and the
 * same noisy detections on every machine, which tests and benchmarks depend on.
 */

/** Mixes integers into one 32-bit seed (e.g. a scenario seed and a frame index). */
export function hashSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    // Fold the value in 32-bit halves so that large indices still change the hash.
    const lo = part | 0;
    const hi = Math.floor(part / 0x100000000) | 0;
    h = Math.imul(h ^ lo, 0x01000193);
    h = Math.imul(h ^ hi, 0x01000193);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [min, max). */
  range(min: number, max: number): number;
  /** Normal with the given mean and standard deviation (Box-Muller). */
  gaussian(mean?: number, sd?: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
}

/** mulberry32: tiny, fast and good enough for simulation noise. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    range: (min, max) => min + (max - min) * next(),
    gaussian: (mean = 0, sd = 1) => {
      const u = 1 - next();
      const v = next();
      return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
    chance: (p) => next() < p,
  };
}
