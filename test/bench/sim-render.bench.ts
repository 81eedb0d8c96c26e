/**
 * Cost of rendering one simulated 640x640 frame (scene, occlusion-aware ground truth, grain) per
 * scenario, beside the floor any frame pays: copying the background and adding the grain.
 */
import { SimFrameSource } from '../../plugins/camera/src/sim-frame-source.js';
import { listScenarios, loadScenario } from '../../plugins/camera/src/scenario-files.js';

const FRAMES = 300;

function stats(samples: number[]): { median: number; p99: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] };
}

function time(fn: (i: number) => void): { median: number; p99: number } {
  for (let i = 0; i < 30; i++) fn(i);
  const samples: number[] = [];
  for (let i = 0; i < FRAMES; i++) {
    const t0 = performance.now();
    fn(i);
    samples.push(performance.now() - t0);
  }
  return stats(samples);
}

// Baseline: the background copy plus per-pixel grain, the least a textured frame costs.
const background = new Uint8Array(640 * 640 * 3).fill(120);
const grain = new Int8Array(background.length + 8192).map((_, i) => (((i * 2654435761) >>> 24) % 7) - 3);
const baseline = time((i) => {
  const data = background.slice();
  const view = new Uint8ClampedArray(data.buffer);
  const off = (i * 977) % 8192;
  for (let k = 0; k < view.length; k++) view[k] = view[k] + grain[k + off];
});
const fmt = (v: number) => v.toFixed(2).padStart(7);
console.log(`frames per case: ${FRAMES}; times in ms per frame`);
console.log(`${'case'.padEnd(22)} ${'median'.padStart(7)} ${'p99'.padStart(7)}  ratio(median) vs baseline`);
console.log(`${'baseline copy+grain'.padEnd(22)} ${fmt(baseline.median)} ${fmt(baseline.p99)}  1.00`);
for (const name of listScenarios()) {
  const source = new SimFrameSource(loadScenario(name).scenario, { originMs: 0 });
  const r = time((i) => source.readSync(i * 100));
  console.log(`${name.padEnd(22)} ${fmt(r.median)} ${fmt(r.p99)}  ${(r.median / baseline.median).toFixed(2)}  (budget at 10 Hz: 100 ms)`);
}
