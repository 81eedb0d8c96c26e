import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../../../../core/src/paths/package-root.js';
import { DetectionSchema, type Detection } from '../../../../../core/src/contracts/detection.js';
import { LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { SimDetectorBackend } from '../../../../../plugins/detector/src/backends/sim-backend.js';
import { SimFrameSource } from '../../../../../plugins/camera/src/sim-frame-source.js';
import { loadScenario } from '../../../../../plugins/camera/src/scenario-files.js';
import type { Frame, GroundTruthObject } from '../../../../../plugins/camera/src/service.js';

/** One real rendered frame; statistics re-use its ground truth under many frame indices (new noise each). */
function frameOf(name: string, tS: number): Frame {
  return new SimFrameSource(loadScenario(name).scenario, { originMs: 0 }).readSync(tS * 1000);
}

function iou(a: readonly number[], b: readonly number[]): number {
  const w = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const h = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = w * h;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

/** The detection of a truth object: same class, best overlap above 0.5. */
function match(dets: Detection[], obj: GroundTruthObject): Detection | undefined {
  let best: Detection | undefined;
  let bestIou = 0.5;
  for (const d of dets) {
    const v = iou(d.b, obj.box);
    if (d.c === obj.classId && v > bestIou) [best, bestIou] = [d, v];
  }
  return best;
}

test('the same frame gives the same detections; another seed or frame gives others', async () => {
  const frame = frameOf('crowd-occlusion', 3);
  const a = await new SimDetectorBackend({ seed: 5 }).detect(frame);
  const b = await new SimDetectorBackend({ seed: 5 }).detect(frame);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, await new SimDetectorBackend({ seed: 6 }).detect(frame));
  assert.notDeepEqual(a, await new SimDetectorBackend({ seed: 5 }).detect({ ...frame, index: frame.index + 1 }));
});

test('detections are valid Detection messages inside the frame, with production classes only', () => {
  const backend = new SimDetectorBackend({ falsePositiveRate: 1 });
  for (const [name, t] of [
    ['vehicles', 3],
    ['weapon-appears', 8],
    ['plates-and-signs', 10],
  ] as const) {
    const frame = frameOf(name, t);
    for (let i = 0; i < 50; i++) {
      for (const d of backend.detectSync({ ...frame, index: i })) {
        assert.ok(DetectionSchema.safeParse(d).success, JSON.stringify(d));
        assert.ok(d.c >= 0 && d.c <= 13, `class ${d.c}`);
        const [x1, y1, x2, y2] = d.b as [number, number, number, number];
        assert.ok(x1 >= 0 && y1 >= 0 && x2 <= 640 && y2 <= 640 && x2 > x1 && y2 > y1, `box ${JSON.stringify(d.b)}`);
      }
    }
  }
});

test('without noise the detections are the production-class ground truth', () => {
  const frame = frameOf('plates-and-signs', 10);
  const exact = new SimDetectorBackend({ boxJitterPx: 0, confidenceSpread: 0, missProbability: 0, falsePositiveRate: 0, minVisibility: 0 });
  const dets = exact.detectSync(frame);
  const production = frame.truth!.filter((o) => o.classId >= 0);
  assert.ok(
    frame.truth!.some((o) => o.classId < 0),
    'the frame has plates or signs',
  );
  assert.equal(dets.length, production.length, 'plates and signs are not detected');
  for (const obj of production) {
    const d = match(dets, obj);
    assert.ok(d, `object ${obj.id} detected`);
    assert.deepEqual(d.b, obj.box);
  }
});

test('box jitter and confidence follow the settings', () => {
  const frame = frameOf('people-crossing', 2);
  const visible = frame.truth!.filter((o) => o.visibility === 1);
  assert.equal(visible.length, 2);
  const backend = new SimDetectorBackend({ boxJitterPx: 3, confidenceByClass: { '0': 0.9 }, confidenceSpread: 0.05, missProbability: 0, falsePositiveRate: 0 });
  const errors: number[] = [];
  const confidences: number[] = [];
  for (let i = 0; i < 400; i++) {
    const dets = backend.detectSync({ ...frame, index: i });
    for (const obj of visible) {
      const d = match(dets, obj)!;
      assert.ok(d, 'every fully visible object is detected with a miss probability of 0');
      d.b.slice(0, 4).forEach((v, k) => errors.push(v - obj.box[k]));
      confidences.push(d.p);
    }
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const sd = Math.sqrt(mean(errors.map((e) => e * e)));
  assert.ok(Math.abs(mean(errors)) < 0.3, `jitter is unbiased (${mean(errors)})`);
  assert.ok(sd > 2.6 && sd < 3.4, `jitter sd ${sd} near 3`);
  assert.ok(Math.abs(mean(confidences) - 0.9) < 0.01, `confidence mean ${mean(confidences)} near 0.9`);
});

test('misses: hidden objects never, mostly hidden ones often, visible ones at the base rate', () => {
  const backend = new SimDetectorBackend({ missProbability: 0.1, falsePositiveRate: 0 });
  const hiddenFrame = frameOf('crowd-occlusion', 7);
  const hidden = hiddenFrame.truth!.find((o) => o.id === 2)!;
  assert.equal(hidden.visibility, 0);
  const partFrame = frameOf('crowd-occlusion', 6.2);
  const part = partFrame.truth!.find((o) => o.id === 2)!;
  assert.ok(part.visibility > 0.2 && part.visibility < 0.6, `partly hidden (${part.visibility})`);
  const fullFrame = frameOf('crowd-occlusion', 4);
  const full = fullFrame.truth!.find((o) => o.id === 2)!;
  assert.equal(full.visibility, 1);
  const rate = (frame: Frame, obj: GroundTruthObject) => {
    let hits = 0;
    for (let i = 0; i < 1000; i++) if (match(backend.detectSync({ ...frame, index: i }), obj)) hits++;
    return hits / 1000;
  };
  assert.equal(rate(hiddenFrame, hidden), 0);
  const fullRate = rate(fullFrame, full);
  const partRate = rate(partFrame, part);
  assert.ok(Math.abs(fullRate - 0.9) < 0.04, `visible detected ${fullRate}, expected about 0.9`);
  const expectedPart = 1 - backend.missChance(part.visibility);
  assert.ok(Math.abs(partRate - expectedPart) < 0.05, `partly hidden detected ${partRate}, expected about ${expectedPart}`);
  assert.ok(partRate < fullRate - 0.2);
  assert.equal(backend.missChance(0.05), 1, 'below minVisibility nothing is seen');
});

test('partly hidden objects score lower than visible ones', () => {
  const backend = new SimDetectorBackend({ missProbability: 0, minVisibility: 0, falsePositiveRate: 0 });
  const mean = (tS: number) => {
    const frame = frameOf('crowd-occlusion', tS);
    const obj = frame.truth!.find((o) => o.id === 2)!;
    const ps: number[] = [];
    for (let i = 0; i < 300; i++) {
      const d = match(backend.detectSync({ ...frame, index: i }), obj);
      if (d) ps.push(d.p);
    }
    return ps.reduce((s, p) => s + p, 0) / ps.length;
  };
  assert.ok(mean(6.2) < mean(4) - 0.1);
});

test('false positives come at the configured rate, with the configured classes and low scores', () => {
  const frame = frameOf('people-crossing', 2);
  const backend = new SimDetectorBackend({ falsePositiveRate: 0.5, falsePositiveClasses: [0, 2], missProbability: 0, boxJitterPx: 0 });
  let extra = 0;
  const classes = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const dets = backend.detectSync({ ...frame, index: i });
    const fps = dets.filter((d) => !frame.truth!.some((o) => iou(d.b, o.box) > 0.99));
    extra += fps.length;
    for (const d of fps) {
      classes.add(d.c);
      assert.ok(d.p <= 0.5);
    }
  }
  assert.ok(Math.abs(extra / 2000 - 0.5) < 0.06, `false positives per frame ${extra / 2000}`);
  assert.deepEqual([...classes].sort(), [0, 2]);
  const none = new SimDetectorBackend({ falsePositiveRate: 0, missProbability: 0, minVisibility: 0 });
  for (let i = 0; i < 200; i++) assert.equal(none.detectSync({ ...frame, index: i }).length, frame.truth!.length);
});

test('a frame without ground truth and bad options are typed errors', async () => {
  const frame = frameOf('people-crossing', 1);
  const { truth: _truth, ...bare } = frame;
  await assert.rejects(new SimDetectorBackend().detect(bare), (err: unknown) => err instanceof LookoutError && err.code === 'backend_unavailable');
  assert.throws(
    () => new SimDetectorBackend({ missProbability: 2 }),
    (err: unknown) => {
      assert.ok(err instanceof LookoutError && err.code === 'config_invalid');
      assert.match(err.message, /missProbability/);
      return true;
    },
  );
  assert.throws(() => new SimDetectorBackend({ jitter: 1 } as never), /jitter/);
});

test('status names the sim back-end and the production classes', () => {
  const status = new SimDetectorBackend().status();
  assert.equal(status.backend, 'sim');
  assert.equal(status.classMap, 'production');
  assert.deepEqual(status.classes[0], { id: 0, name: 'person', model_labels: ['person'] });
  assert.deepEqual(status.classes[11], { id: 11, name: 'knife', model_labels: ['knife'] });
  assert.deepEqual(status.inputShape, [1, 3, 640, 640]);
});

interface RecordedCase {
  scenario: string;
  options: { seed: number; falsePositiveRate: number; missProbability: number };
  frame: { index: number; width: number; height: number; truth: GroundTruthObject[] };
  dets: Detection[];
}

/** Recorded before the back-end had an Omni mode: truth in, dets out, so the scene renderer can change without touching this. */
async function recordedCases(): Promise<RecordedCase[]> {
  const path = join(packageRoot(), 'test', 'fixtures', 'detector', 'sim-production-dets.json');
  return (JSON.parse(await readFile(path, 'utf8')) as { cases: RecordedCase[] }).cases;
}

function recordedFrame(c: RecordedCase): Frame {
  return { ...c.frame, timestampMs: 0, format: 'bgr888', data: new Uint8Array(0) };
}

test('production mode, the default or named, gives exactly the detections recorded before the Omni mode existed', async () => {
  const cases = await recordedCases();
  assert.ok(cases.some((c) => c.scenario === 'plates-and-signs' && c.dets.length > 0));
  for (const c of cases) {
    const frame = recordedFrame(c);
    assert.deepEqual(new SimDetectorBackend(c.options).detectSync(frame), c.dets, `${c.scenario} frame ${c.frame.index}`);
    assert.deepEqual(new SimDetectorBackend({ ...c.options, classMap: 'production' }).detectSync(frame), c.dets);
  }
});

const OMNI_SCENE_IDS: Record<string, number> = { license_plate: 14, sign: 15, car: 2, person: 0 };

test('omni15: plates come out as 14 and signs as 15, the other classes with the same ids and noise as production', async () => {
  const cases = await recordedCases();
  let plates = 0;
  let signs = 0;
  for (const c of cases) {
    const frame = recordedFrame(c);
    const omni = new SimDetectorBackend({ ...c.options, classMap: 'omni15' }).detectSync(frame);
    // Omni has no train, backpack, handbag, suitcase, cell phone or shotgun: those are not seen.
    const omniLacks = new Set([4, 6, 7, 8, 9, 13]);
    assert.deepEqual(
      omni.filter((d) => d.c !== 14 && d.c !== 15),
      c.dets.filter((d) => !omniLacks.has(d.c)),
      `${c.scenario} frame ${c.frame.index}`,
    );
    plates += omni.filter((d) => d.c === 14).length;
    signs += omni.filter((d) => d.c === 15).length;
  }
  assert.ok(plates > 0 && signs > 0, `plates ${plates}, signs ${signs}`);

  // Without noise each plate and sign is detected on its own box with its class.
  const frame = frameOf('plates-and-signs', 10);
  const exact = new SimDetectorBackend({ boxJitterPx: 0, confidenceSpread: 0, missProbability: 0, falsePositiveRate: 0, minVisibility: 0, classMap: 'omni15' });
  const dets = exact.detectSync(frame);
  assert.equal(dets.length, frame.truth!.length, 'every object of the scene is an Omni class');
  for (const obj of frame.truth!) {
    const c = OMNI_SCENE_IDS[obj.label];
    assert.notEqual(c, undefined, obj.label);
    const d = dets.find((x) => x.c === c && x.b.every((v, k) => v === obj.box[k]));
    assert.ok(d, `${obj.label} ${obj.id} detected as ${c} on its box`);
  }
  assert.equal(dets.filter((d) => d.c === 15).length, 2, 'both signs');
});

test('omni15: a scene gun is an Omni handgun, published as gun (10); Omni-less classes are not seen', () => {
  const frame = frameOf('weapon-appears', 8);
  const gun = frame.truth!.find((o) => o.label === 'gun');
  assert.ok(gun, 'the scene shows a gun');
  const exact = { boxJitterPx: 0, confidenceSpread: 0, missProbability: 0, falsePositiveRate: 0, minVisibility: 0 };
  const omni = new SimDetectorBackend({ ...exact, classMap: 'omni15' }).detectSync(frame);
  assert.ok(omni.some((d) => d.c === 10 && d.b.every((v, k) => v === gun.box[k])));
  const lacking = { ...frame, truth: frame.truth!.map((o) => ({ ...o, label: 'train', classId: 4 })) };
  assert.deepEqual(new SimDetectorBackend({ ...exact, classMap: 'omni15' }).detectSync(lacking), []);
  assert.equal(new SimDetectorBackend(exact).detectSync(lacking).length, frame.truth!.length, 'production sees trains');
});

test('omni15 status: the Omni map through its remap, license_plate and sign named by the model labels', () => {
  const status = new SimDetectorBackend({ classMap: 'omni15' }).status();
  assert.equal(status.classMap, 'omni15');
  assert.deepEqual(status.classes, [
    { id: 0, name: 'person', model_labels: ['person'] },
    { id: 1, name: 'bicycle', model_labels: ['bicycle'] },
    { id: 2, name: 'car', model_labels: ['car'] },
    { id: 3, name: 'bus', model_labels: ['bus'] },
    { id: 5, name: 'truck', model_labels: ['truck'] },
    { id: 10, name: 'gun', model_labels: ['handgun'] },
    { id: 11, name: 'knife', model_labels: ['knife'] },
    { id: 12, name: 'rifle', model_labels: ['rifle'] },
    { id: 14, name: 'license_plate', model_labels: ['license_plate'] },
    { id: 15, name: 'sign', model_labels: ['sign'] },
  ]);
  assert.ok(!new SimDetectorBackend().status().classes.some((c) => c.model_labels.includes('license_plate')), 'production has no plates');
  assert.throws(() => new SimDetectorBackend({ classMap: 'custom' as never }), /classMap/);
});
