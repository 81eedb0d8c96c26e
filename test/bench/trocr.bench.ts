/**
 * The text cascade through the onnx back-end, on generated pairs of the spec's signatures (the
 * decoder at TrOCR-small's decoder sizes: 6 layers, 8 heads of 32, MLP 1024, a 64044-token head; the
 * encoder is a small stand-in, not DeiT):
 * - per-token decoder cost with the static caches, beside the same greedy read through the
 *   full-sequence graph without caches (every step recomputes the whole prefix): what the caches buy;
 * - crops per second through the cascade's worker thread (crop, encoder, 20 decoder steps), beside
 *   the same reads in the calling thread;
 * - how long the calling thread (the detector's) is blocked while crops are read: the worker vs in-thread.
 * Figures only; nothing here passes or fails on time.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { CropResizer } from '../../native/ts/crop-resizer.js';
import { argmaxWithLogProbability, greedyDecode } from '../../plugins/trocr/src/model/greedy-decode.js';
import { TextRecognizer } from '../../plugins/trocr/src/model/text-recognizer.js';
import { TROCR } from '../../plugins/trocr/src/model/trocr-contract.js';
import { OcrWorker } from '../../plugins/trocr/src/worker/ocr-worker.js';
import type { CropBox } from '../../plugins/trocr/src/worker/worker-protocol.js';
import { testFrameBytes } from '../support/onnx-model.js';
import { buildTrocrPair, writeTrocrPair } from '../support/trocr-onnx-model.js';

const READS = 12;
const WARMUP = 2;
const INT64 = { idsType: 'int64', positionType: 'int64' } as const;
const frame = { width: 640, height: 640, data: testFrameBytes(640, 640, 3) };
const BOXES: CropBox[] = [
  [100, 300, 220, 340],
  [400, 120, 470, 200],
  [250, 500, 330, 530],
  [30, 40, 150, 90],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (v: number) => v.toFixed(2).padStart(8);

console.log(`node ${process.version}; onnxruntime-node ${ort.env.versions.common}; 1 intra-op thread`);
const build0 = performance.now();
const pair = buildTrocrPair({ seed: 5, vocab: 64044, ffn: 1024 });
console.log(
  `generated pair (never EOS: 20 tokens a read) in ${(performance.now() - build0).toFixed(0)} ms; decoder ${(pair.decoder.length / 1e6).toFixed(1)} MB`,
);

// ---------------------------------------------------------------- per-token decoder cost
const options: ort.InferenceSession.SessionOptions = { executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: 1 };
const [encoder, decoder, full] = await Promise.all([
  ort.InferenceSession.create(pair.encoder, options),
  ort.InferenceSession.create(pair.decoder, options),
  ort.InferenceSession.create(pair.fullDecoder, options),
]);
const crops = new CropResizer({ size: TROCR.CROP_SIZE }).run(frame, BOXES).tensor;
const per = 3 * TROCR.CROP_SIZE * TROCR.CROP_SIZE;
const cached: number[] = [];
const uncached: number[] = [];
for (let i = 0; i < READS + WARMUP; i++) {
  const pixels = crops.subarray((i % BOXES.length) * per, ((i % BOXES.length) + 1) * per);
  const cross = await encoder.run({ pixel_values: new ort.Tensor('float32', pixels, [1, 3, TROCR.CROP_SIZE, TROCR.CROP_SIZE]) });
  const read = await greedyDecode((f) => decoder.run(f), cross, INT64);
  const feeds: Record<string, ort.Tensor> = {};
  for (const [name, t] of Object.entries(cross)) feeds[name.replace(/^present\./, 'past_key_values.')] = t;
  const ids: number[] = [TROCR.START];
  const t0 = performance.now();
  for (let step = 0; step < TROCR.MAX_SEQ_LEN; step++) {
    feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(ids.map((x) => BigInt(x))), [1, ids.length]);
    const out = await full.run(feeds);
    const vocab = out.logits.dims[2];
    const next = argmaxWithLogProbability((out.logits.data as Float32Array).subarray(step * vocab, (step + 1) * vocab)).id;
    if (next === TROCR.EOS) break;
    ids.push(next);
  }
  if (i < WARMUP) continue;
  cached.push(read.decoderMs / read.steps);
  uncached.push((performance.now() - t0) / read.steps);
}
console.log('\nper-token decoder cost, ms (20-token reads): median');
console.log(`  static caches (19 in, 20 out)   ${fmt(median(cached))}`);
console.log(`  full sequence, no cache         ${fmt(median(uncached))}   no-cache/cached ${(median(uncached) / median(cached)).toFixed(1)}x`);

// ---------------------------------------------------------------- crops per second
const dir = join(tmpdir(), `trocr-bench-${process.pid}`);
const paths = await writeTrocrPair(dir, pair);
const worker = await OcrWorker.open({ encoderPath: paths.encoder, decoderPath: paths.decoder, threads: 1 });
const inThread = await TextRecognizer.open(pair.encoder, pair.decoder, { encoderName: 'encoder', decoderName: 'decoder', threads: 1 });
const resizer = new CropResizer({ size: TROCR.CROP_SIZE });

async function cropsPerSecond(readFrame: () => Promise<unknown>, frames: number): Promise<{ perSec: number; blockedMaxMs: number; blockedP99Ms: number }> {
  await readFrame();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  // A timer stands for the detector: how late it fires is how long the thread was held.
  const tick = setInterval(() => undefined, 5);
  delay.enable();
  const t0 = performance.now();
  for (let i = 0; i < frames; i++) await readFrame();
  const seconds = (performance.now() - t0) / 1000;
  delay.disable();
  clearInterval(tick);
  return { perSec: (frames * BOXES.length) / seconds, blockedMaxMs: delay.max / 1e6, blockedP99Ms: delay.percentile(99) / 1e6 };
}

const viaWorker = await cropsPerSecond(() => worker.read(frame, BOXES), 3);
const viaThread = await cropsPerSecond(async () => {
  const t = resizer.run(frame, BOXES).tensor;
  for (let b = 0; b < BOXES.length; b++) await inThread.read(t.subarray(b * per, (b + 1) * per));
}, 3);
console.log(`\ncrops per second (4 crops a frame, 20 tokens each; crop kernel: ${worker.opened.cropKernel})`);
console.log(`  cascade worker thread           ${fmt(viaWorker.perSec)}`);
console.log(`  same reads in the calling thread${fmt(viaThread.perSec)}   worker/in-thread ${(viaWorker.perSec / viaThread.perSec).toFixed(2)}x`);
console.log('\nthe calling (detector) thread held while crops are read, ms: max, p99 of a 5 ms timer’s lateness');
console.log(`  cascade worker thread           ${fmt(viaWorker.blockedMaxMs)} ${fmt(viaWorker.blockedP99Ms)}`);
console.log(
  `  in the calling thread           ${fmt(viaThread.blockedMaxMs)} ${fmt(viaThread.blockedP99Ms)}   in-thread/worker (max) ${(viaThread.blockedMaxMs / viaWorker.blockedMaxMs).toFixed(1)}x`,
);

await worker.close();
await inThread.close();
await Promise.all([encoder.release(), decoder.release(), full.release()]);
await rm(dir, { recursive: true, force: true });
