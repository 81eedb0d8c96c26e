import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Detection } from '../../../../../core/src/contracts/detection.js';
import type { Frame } from '../../../../../plugins/camera/src/service.js';
import { SimFrameSource } from '../../../../../plugins/camera/src/sim-frame-source.js';
import { loadScenario } from '../../../../../plugins/camera/src/scenario-files.js';
import { SimDetectorBackend } from '../../../../../plugins/detector/src/backends/sim-backend.js';
import { ByteTracker } from '../../../../../plugins/tracker/src/tracking/byte-tracker.js';
import { evaluateMot, hypothesesFromDetections } from '../../../../../plugins/tracker/src/evaluation/mot-metrics.js';
import { trackIdsPerObject } from '../../../../support/track-identity.js';

/** Every frame of a bundled scenario, rendered once (ground truth included). */
function scenarioFrames(name: string): Frame[] {
  const source = new SimFrameSource(loadScenario(name).scenario, { originMs: 0 });
  const { durationS, fps } = source.scenario;
  const frames = Array.from({ length: Math.round(durationS * fps) }, (_, i) => source.readSync((i * 1000) / fps));
  void source.close();
  return frames;
}

/** Truth id -> track ids its detections carried; a detection belongs to the visible object of its class it overlaps most. */
function idsPerObject(frames: Frame[], outputs: Detection[][]): Map<number, Set<number>> {
  return trackIdsPerObject(
    frames.map((f) => f.truth!),
    outputs,
    (g, d) => g.visibility >= 0.1 && g.classId === d.c,
  );
}

for (const name of ['people-crossing', 'crowd-occlusion']) {
  test(`${name}: every person keeps one track id through the scenario (sim detector, 5 seeds)`, () => {
    const frames = scenarioFrames(name);
    const people = [...new Set(frames.flatMap((f) => f.truth!.filter((g) => g.classId === 0).map((g) => g.id)))];
    assert.ok(people.length >= 2);
    // The scenario really contains the hard part: some person is (almost) fully hidden for a while.
    const hiddenFrames = frames.filter((f) => f.truth!.some((g) => g.visibility < 0.3 && g.box[0] > 5 && g.box[2] < 635)).length;
    assert.ok(hiddenFrames >= 3, `${name}: only ${hiddenFrames} frames with an occluded person`);
    for (let seed = 1; seed <= 5; seed++) {
      const backend = new SimDetectorBackend({ seed });
      const tracker = new ByteTracker();
      const outputs = frames.map((f) => tracker.update(backend.detectSync(f)));
      const ids = idsPerObject(frames, outputs);
      const used = new Map<number, number>();
      for (const person of people) {
        const got = ids.get(person);
        assert.ok(got, `seed ${seed}: person ${person} never got a track id`);
        assert.equal(got.size, 1, `seed ${seed}: person ${person} carried ids ${[...got].join(', ')}`);
        const [id] = got;
        assert.equal(used.get(id), undefined, `seed ${seed}: track ${id} given to persons ${used.get(id)} and ${person}`);
        used.set(id, person);
      }
      const m = evaluateMot(
        outputs.map((out, f) => ({ truth: frames[f].truth!, hypotheses: hypothesesFromDetections(out) })),
        { classAware: true },
      );
      assert.equal(m.idSwitches, 0, `seed ${seed}: CLEAR MOT id switches`);
    }
  });
}
