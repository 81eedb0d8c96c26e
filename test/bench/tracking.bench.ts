/**
 * Tracking quality and cost. Quality: IDF1, MOTA and id switches of the ByteTrack-style tracker
 * beside the greedy-IoU baseline, both fed the very same detections (the sim detector back-end on the
 * bundled scenarios' ground truth, several noise seeds, plus a denser synthetic crowd). Cost: time of
 * one tracker update per frame (median, p99), the baseline measured in the same run.
 */
import type { Detection } from '../../core/src/contracts/detection.js';
import type { GroundTruthObject } from '../../plugins/camera/src/service.js';
import { SimFrameSource } from '../../plugins/camera/src/sim-frame-source.js';
import { listScenarios, loadScenario } from '../../plugins/camera/src/scenario-files.js';
import { SimDetectorBackend } from '../../plugins/detector/src/backends/sim-backend.js';
import { ByteTracker, type MultiObjectTracker } from '../../plugins/tracker/src/tracking/byte-tracker.js';
import { GreedyIouTracker } from '../../plugins/tracker/src/tracking/greedy-iou-tracker.js';
import { evaluateMot, hypothesesFromDetections, type MotMetrics } from '../../plugins/tracker/src/evaluation/mot-metrics.js';
import { crowdScene, detectScene, renderTruth } from '../../plugins/tracker/src/evaluation/synthetic-scenes.js';

const SEEDS = [1, 2, 3, 4, 5];
const TIMING_REPEATS = 5;

interface Sequence {
  name: string;
  truth: GroundTruthObject[][];
  /** One detection sequence per noise seed. */
  runs: Detection[][][];
}

function scenarioSequence(name: string): Sequence {
  const source = new SimFrameSource(loadScenario(name).scenario, { originMs: 0 });
  const { durationS, fps } = source.scenario;
  const frames = Array.from({ length: Math.round(durationS * fps) }, (_, i) => source.readSync((i * 1000) / fps));
  void source.close();
  // Plates and signs have no production class: no detector reports them, so no tracker is judged on them.
  const truth = frames.map((f) => f.truth!.filter((g) => g.classId >= 0));
  const runs = SEEDS.map((seed) => {
    const backend = new SimDetectorBackend({ seed });
    return frames.map((f) => backend.detectSync(f));
  });
  return { name, truth, runs };
}

function syntheticCrowd(people: number, frames: number): Sequence {
  const truth = renderTruth(crowdScene(people, frames, 7));
  return { name: `synthetic-crowd-${people}`, truth: truth.map((f) => f.truth), runs: SEEDS.map((seed) => detectScene(truth, seed)) };
}

type Make = () => MultiObjectTracker;
const TRACKERS: Array<[string, Make]> = [
  ['bytetrack', () => new ByteTracker()],
  ['greedy-iou', () => new GreedyIouTracker()],
];

function quality(seq: Sequence, make: Make): { idf1: number; mota: number; idsw: number; hypIds: number; gtIds: number } {
  const ms: MotMetrics[] = seq.runs.map((dets) => {
    const tracker = make();
    const frames = dets.map((d, f) => ({ truth: seq.truth[f], hypotheses: hypothesesFromDetections(tracker.update(d)) }));
    return evaluateMot(frames, { classAware: true });
  });
  const mean = (k: 'idf1' | 'mota' | 'hypIds') => ms.reduce((s, m) => s + m[k], 0) / ms.length;
  return { idf1: mean('idf1'), mota: mean('mota'), idsw: ms.reduce((s, m) => s + m.idSwitches, 0), hypIds: mean('hypIds'), gtIds: ms[0].gtIds };
}

function timing(seqs: Sequence[], make: Make): { median: number; p99: number; frames: number } {
  const samples: number[] = [];
  for (let rep = 0; rep < TIMING_REPEATS; rep++) {
    for (const seq of seqs) {
      for (const dets of seq.runs) {
        const tracker = make();
        for (const d of dets) {
          const t0 = performance.now();
          tracker.update(d);
          const dt = performance.now() - t0;
          if (rep > 0) samples.push(dt); // the first pass warms the JIT
        }
      }
    }
  }
  samples.sort((a, b) => a - b);
  return {
    median: samples[Math.floor(samples.length / 2)],
    p99: samples[Math.min(samples.length - 1, Math.floor(samples.length * 0.99))],
    frames: samples.length,
  };
}

const t0 = performance.now();
const scenarios = listScenarios().map(scenarioSequence);
const dense = syntheticCrowd(40, 200);
const all = [...scenarios, syntheticCrowd(12, 150), dense];
console.log(`prepared ${all.length} sequences x ${SEEDS.length} detector seeds in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.log('quality: mean over seeds of IDF1 and MOTA, id switches summed over seeds (IoU 0.5, class-aware)\n');

const head = ['sequence', 'frames', 'gt ids', 'IDF1 byte', 'IDF1 greedy', 'MOTA byte', 'MOTA greedy', 'IDSW byte', 'IDSW greedy', 'ids byte', 'ids greedy'];
const widths = [22, 6, 6, 9, 11, 9, 11, 9, 11, 8, 10];
const row = (cells: Array<string | number>) =>
  console.log(cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join(' '));
row(head);
const totals = { byte: { idf1: 0, mota: 0, idsw: 0 }, greedy: { idf1: 0, mota: 0, idsw: 0 } };
for (const seq of all) {
  const [b, g] = TRACKERS.map(([, make]) => quality(seq, make)) as [ReturnType<typeof quality>, ReturnType<typeof quality>];
  row([
    seq.name,
    seq.truth.length,
    b.gtIds,
    b.idf1.toFixed(3),
    g.idf1.toFixed(3),
    b.mota.toFixed(3),
    g.mota.toFixed(3),
    b.idsw,
    g.idsw,
    b.hypIds.toFixed(1),
    g.hypIds.toFixed(1),
  ]);
  for (const [k, m] of [
    ['byte', b],
    ['greedy', g],
  ] as const) {
    totals[k].idf1 += m.idf1 / all.length;
    totals[k].mota += m.mota / all.length;
    totals[k].idsw += m.idsw;
  }
}
row([
  'mean / total',
  '',
  '',
  totals.byte.idf1.toFixed(3),
  totals.greedy.idf1.toFixed(3),
  totals.byte.mota.toFixed(3),
  totals.greedy.mota.toFixed(3),
  totals.byte.idsw,
  totals.greedy.idsw,
  '',
  '',
]);

console.log('\nper-frame cost of one tracker update (microseconds)');
const costHead = ['frames', 'tracker', 'median', 'p99', 'ratio median vs greedy'];
console.log(`${costHead[0].padEnd(26)} ${costHead[1].padEnd(11)} ${costHead[2].padStart(8)} ${costHead[3].padStart(8)}  ${costHead[4]}`);
for (const [label, seqs] of [
  ['bundled scenarios', scenarios],
  [`${dense.name} (dense)`, [dense]],
] as const) {
  const [byte, greedy] = TRACKERS.map(([, make]) => timing([...seqs], make)) as [ReturnType<typeof timing>, ReturnType<typeof timing>];
  for (const [name, r] of [
    ['bytetrack', byte],
    ['greedy-iou', greedy],
  ] as const) {
    console.log(
      `${label.padEnd(26)} ${name.padEnd(11)} ${(r.median * 1000).toFixed(1).padStart(8)} ${(r.p99 * 1000).toFixed(1).padStart(8)}  ${(r.median / greedy.median).toFixed(2)}`,
    );
  }
}
console.log('\nbudget at the 10 Hz detector stride: 100000 us per frame');
