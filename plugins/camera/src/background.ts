import { hashSeed, seededRandom } from 'lookout/lib/random';
import type { Scenario } from './scenario-schema.js';
import { hexToBgr } from './scene-state.js';

/**
 * The static backdrop: sky and ground with smooth blotches (bilinear value noise on a coarse grid)
 * and fine grain, so detectors and encoders see texture rather than flat colour. Built once per
 * source; frames start from a copy of it.
 */
export function buildBackground(width: number, height: number, bg: Scenario['background'], seed: number): Uint8Array {
  const rnd = seededRandom(hashSeed(seed, 0xbac6));
  const cell = 32;
  const gw = Math.ceil(width / cell) + 2;
  const gh = Math.ceil(height / cell) + 2;
  const grid = new Float32Array(gw * gh);
  for (let i = 0; i < grid.length; i++) grid[i] = rnd.range(-1, 1);
  const sky = hexToBgr(bg.sky);
  const ground = hexToBgr(bg.ground);
  const out = new Uint8Array(width * height * 3);
  const amp = bg.texture;
  for (let y = 0; y < height; y++) {
    const gy = y / cell;
    const iy = Math.floor(gy);
    const fy = gy - iy;
    const base = y < bg.horizonY ? sky : ground;
    // Ground darkens slightly towards the horizon, a cheap depth cue.
    const shade = y < bg.horizonY ? 1 : 0.85 + 0.15 * ((y - bg.horizonY) / Math.max(1, height - bg.horizonY));
    for (let x = 0; x < width; x++) {
      const gx = x / cell;
      const ix = Math.floor(gx);
      const fx = gx - ix;
      const g0 = grid[iy * gw + ix] * (1 - fx) + grid[iy * gw + ix + 1] * fx;
      const g1 = grid[(iy + 1) * gw + ix] * (1 - fx) + grid[(iy + 1) * gw + ix + 1] * fx;
      const n = (g0 * (1 - fy) + g1 * fy) * amp + rnd.range(-amp / 4, amp / 4);
      const o = (y * width + x) * 3;
      out[o] = clamp(base[0] * shade + n);
      out[o + 1] = clamp(base[1] * shade + n);
      out[o + 2] = clamp(base[2] * shade + n);
    }
  }
  return out;
}

function clamp(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
}

/** Grain added per frame: a table longer than a frame, read at a per-frame offset. */
export function buildNoiseTable(length: number, amplitude: number, seed: number): Int8Array {
  const rnd = seededRandom(hashSeed(seed, 0x9a15e));
  const table = new Int8Array(length);
  const a = Math.min(127, Math.round(amplitude));
  for (let i = 0; i < length; i++) table[i] = Math.round(rnd.range(-a, a));
  return table;
}
