/**
 * Per-frame cost of each native kernel beside its TypeScript twin (what runs with LOOKOUT_NATIVE=0
 * or without the addon) and beside the plain reference loop, measured in the same run, with the
 * ratios: preprocessing 640 -> 544/640/672 (NCHW float32), the production bake's uint8 BGR input,
 * four 384x384 text crops, RF-DETR decoding, the tracker's IoU matrix and Annex B picture counting.
 * Figures only; nothing here passes or fails on time.
 */
import { execFileSync } from 'node:child_process';
import { BgrResizer, CropResizer, bgrResampleReference, nativeStatus, nativeAddon, resampleReference, type CropBox } from '../../native/ts/index.js';
import { accessUnitsOf, countPicturesTwin, countPicturesWith } from '../../lib/media/index.js';
import { Preprocessor } from '../../plugins/detector/src/model/preprocess.js';
import { preprocessReference } from '../../plugins/detector/src/model/preprocess-reference.js';
import { DetrDecoder } from '../../plugins/detector/src/model/decode.js';
import { decodeReference } from '../../plugins/detector/src/model/decode-reference.js';
import type { DecodeOptions } from '../../plugins/detector/src/model/decode-options.js';
import { iou, type Box } from '../../plugins/tracker/src/geometry/box.js';
import { IouKernel } from '../../plugins/tracker/src/geometry/iou-kernel.js';
import { seededRandom, testFrameBytes } from '../support/onnx-model.js';
import { detrOutputSets } from './detr-outputs.js';

interface Stats {
  median: number;
  p99: number;
  n: number;
}

function measure(fn: (i: number) => void, iterations: number, warmup = Math.max(3, iterations >> 3)): Stats {
  for (let i = 0; i < warmup; i++) fn(i);
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    fn(i);
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)], p99: samples[Math.min(samples.length - 1, Math.ceil(samples.length * 0.99) - 1)], n: iterations };
}

const fmt = (v: number) => (v < 0.01 ? v.toFixed(5) : v < 1 ? v.toFixed(4) : v.toFixed(2)).padStart(9);
function report(name: string, native: Stats, twin: Stats, reference: Stats): void {
  console.log(
    `${name.padEnd(40)} native ${fmt(native.median)} ${fmt(native.p99)}   twin ${fmt(twin.median)} ${fmt(twin.p99)}   plain ${fmt(reference.median)} ${fmt(reference.p99)}   ` +
      `twin/native ${(twin.median / native.median).toFixed(1).padStart(6)}x   plain/native ${(reference.median / native.median).toFixed(1).padStart(7)}x`,
  );
}

const addon = nativeAddon();
if (!addon) {
  console.error(`the native addon is not loaded (${nativeStatus().reason}); npm install builds it`);
  process.exit(1);
}
let sink = 0; // keeps results alive so no work is optimized away
const frames = [1, 2, 3, 4].map((seed) => testFrameBytes(640, 640, seed));

console.log(`node ${process.version}; times in ms per call: median p99; the addon: ${nativeStatus().path}`);

console.log('\npreprocess: 640x640 BGR888 -> NCHW float32 RGB, bilinear, ImageNet-normalized');
for (const [size, antialias] of [
  [544, true],
  [544, false],
  [640, true],
  [672, true],
] as const) {
  const sizes = { srcWidth: 640, srcHeight: 640, dstWidth: size, dstHeight: size };
  const native = new Preprocessor(sizes, { antialias, addon });
  const twin = new Preprocessor(sizes, { antialias, addon: null });
  report(
    `640 -> ${size}${antialias ? ' (antialiased)' : ' (two-tap)'}`,
    measure((i) => (sink += native.run(frames[i % 4])[i % 1000]), 300),
    measure((i) => (sink += twin.run(frames[i % 4])[i % 1000]), 100),
    measure((i) => (sink += preprocessReference(frames[i % 4], sizes, { antialias })[i % 1000]), size === 544 ? 20 : 8, 2),
  );
}

console.log('\nproduction bake input: BGR888 -> 640x640 BGR888 uint8 (fixed point)');
const wide = [5, 6].map((seed) => testFrameBytes(720, 480, seed));
for (const [sw, sh, input] of [
  [640, 640, frames],
  [720, 480, wide],
] as const) {
  const native = new BgrResizer({ srcWidth: sw, srcHeight: sh, dstWidth: 640, dstHeight: 640 }, true, addon);
  const twin = new BgrResizer({ srcWidth: sw, srcHeight: sh, dstWidth: 640, dstHeight: 640 }, true, null);
  report(
    `${sw}x${sh} -> 640x640 uint8`,
    measure((i) => (sink += native.run(input[i % input.length])[i % 1000]), 300),
    measure((i) => (sink += twin.run(input[i % input.length])[i % 1000]), 60),
    measure((i) => (sink += bgrResampleReference(input[i % input.length], sw, sh, 640, 640, true)[i % 1000]), 5, 1),
  );
}

console.log('\ntext crops: four boxes (plates and signs) of a 640 frame -> 4 x 384x384 RGB float 0..1');
const boxes: CropBox[] = [
  [100.4, 300.2, 220.8, 340.9],
  [400, 120, 600, 180],
  [30, 30, 110, 110],
  [250, 400, 550, 550],
];
const cropNative = new CropResizer({ addon });
const cropTwin = new CropResizer({ addon: null });
const cropOut = new Float32Array(4 * 3 * 384 * 384);
report(
  'four 384x384 crops',
  measure((i) => (sink += cropNative.run({ data: frames[i % 4], width: 640, height: 640 }, boxes, cropOut).tensor[i % 1000]), 300),
  measure((i) => (sink += cropTwin.run({ data: frames[i % 4], width: 640, height: 640 }, boxes, cropOut).tensor[i % 1000]), 60),
  measure(
    (i) => {
      for (const box of boxes) {
        const r = CropResizer.rectOf(box, 640, 640);
        sink += resampleReference(frames[i % 4], 640, r, 384, 384, true, (v) => v)[i % 1000];
      }
    },
    5,
    1,
  ),
);

console.log('\ndecode: Q = 300 queries, sigmoid, top-300 of Q*C, threshold, boxes to 640 pixels, remap');
for (const C of [23, 15]) {
  const { sets, remap } = detrOutputSets(C);
  for (const scoreThreshold of [0.3, 0]) {
    const o: DecodeOptions = { queries: 300, classes: C, frameWidth: 640, frameHeight: 640, topK: 300, scoreThreshold, remap };
    const native = new DetrDecoder(addon);
    const twin = new DetrDecoder(null);
    report(
      `C=${C}, threshold ${scoreThreshold}${scoreThreshold === 0 ? ' (all pairs compete)' : ''}`,
      measure((i) => (sink += native.decode(sets[i % 8].boxes, sets[i % 8].logits, o).length), 400),
      measure((i) => (sink += twin.decode(sets[i % 8].boxes, sets[i % 8].logits, o).length), 400),
      measure((i) => (sink += decodeReference(sets[i % 8].boxes, sets[i % 8].logits, o).length), 200),
    );
  }
}

console.log('\ntracker IoU matrix: tracks x detections, class-aware (boxes packed for the addon included)');
for (const n of [10, 30, 100]) {
  const rnd = seededRandom(n);
  const box = (): Box => {
    const x = rnd() * 600;
    const y = rnd() * 600;
    return [x, y, x + 10 + rnd() * 80, y + 10 + rnd() * 160];
  };
  const a = Array.from({ length: n }, box);
  const b = Array.from({ length: n }, box);
  const ca = a.map((_, i) => i % 3);
  const cb = b.map((_, i) => i % 3);
  const native = new IouKernel(addon);
  const twin = new IouKernel(null);
  report(
    `${n} x ${n}`,
    measure((i) => (sink += native.matrix(a, b, ca, cb)[i % n]), 2000),
    measure((i) => (sink += twin.matrix(a, b, ca, cb)[i % n]), 2000),
    measure((i) => (sink += a.map((ai, r) => b.map((bj, c) => (ca[r] === cb[c] ? iou(ai, bj) : 0)))[i % n][0]), 2000),
  );
}

console.log('\nAnnex B picture count: a 10 s chunk (libx265, 640x360 at 10 fps, GOP 10)');
const chunk = execFileSync('ffmpeg', [
  ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=10', '-t', '10'],
  ...['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'keyint=10:min-keyint=10:scenecut=0:bframes=0:repeat-headers=1:log-level=error'],
  ...['-f', 'hevc', 'pipe:1'],
]);
console.log(`(${(chunk.length / 1e6).toFixed(2)} MB; the plain loop is the recorder's splitter and assembler, copying every access unit)`);
report(
  'count pictures and keyframes',
  measure((i) => (sink += countPicturesWith(addon, chunk.subarray(i % 2)).frames), 200),
  measure((i) => (sink += countPicturesTwin(chunk.subarray(i % 2)).frames), 50),
  measure((i) => (sink += accessUnitsOf(chunk.subarray(i % 2)).length), 20),
);

if (Number.isNaN(sink)) console.log('unreachable');
