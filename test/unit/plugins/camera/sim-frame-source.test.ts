import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import { definePlugin } from '../../../../core/src/plugin/context.js';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import cameraPlugin, { CameraConfigSchema } from '../../../../plugins/camera/src/index.js';
import {
  FrameSourceToken,
  type Frame,
  type FrameSource,
  type GroundTruthObject,
  SimScenarioToken,
  type SimScenarioInfo,
} from '../../../../plugins/camera/src/service.js';
import { SimFrameSource } from '../../../../plugins/camera/src/sim-frame-source.js';
import { loadScenario } from '../../../../plugins/camera/src/scenario-files.js';
import { hexToBgr, compileScene } from '../../../../plugins/camera/src/scene-state.js';
import { SHAPES, silhouetteSpans } from '../../../../plugins/camera/src/shapes.js';
import type { Scenario } from '../../../../plugins/camera/src/scenario-schema.js';

const W = 640;
const H = 640;

function source(name: string): SimFrameSource {
  return new SimFrameSource(loadScenario(name).scenario, { originMs: 0 });
}

function truthOf(frame: Frame, id: number): GroundTruthObject | undefined {
  return frame.truth!.find((o) => o.id === id);
}

/** Pixels within `tol` of a BGR colour: their count and bounding box. */
function colourPixels(frame: Frame, bgr: [number, number, number], tol: number) {
  let count = 0;
  let x1 = Infinity,
    y1 = Infinity,
    x2 = -Infinity,
    y2 = -Infinity;
  const d = frame.data;
  for (let i = 0, p = 0; i < d.length; i += 3, p++) {
    if (Math.abs(d[i] - bgr[0]) <= tol && Math.abs(d[i + 1] - bgr[1]) <= tol && Math.abs(d[i + 2] - bgr[2]) <= tol) {
      count++;
      const x = p % W;
      const y = (p - x) / W;
      if (x < x1) x1 = x;
      if (y < y1) y1 = y;
      if (x + 1 > x2) x2 = x + 1;
      if (y + 1 > y2) y2 = y + 1;
    }
  }
  return { count, box: [x1, y1, x2, y2] };
}

/** Objects whose colour no other object of the scenario shares, with that colour. */
function uniquelyColoured(scenario: Scenario): Map<number, [number, number, number]> {
  const scene = compileScene(scenario);
  const key = (c: number[]) => c.join(',');
  const uses = new Map<string, number>();
  for (const o of scene.objects) uses.set(key(o.bgr), (uses.get(key(o.bgr)) ?? 0) + 1);
  return new Map(scene.objects.filter((o) => uses.get(key(o.bgr)) === 1).map((o) => [o.id, o.bgr]));
}

test('a frame is 640x640 packed BGR888 with ground truth, from a 640x640 camera', async () => {
  const src = source('people-crossing');
  const frame = await src.read(1500);
  assert.equal(frame.format, 'bgr888');
  assert.equal(frame.width, W);
  assert.equal(frame.height, H);
  assert.ok(frame.data instanceof Uint8Array);
  assert.equal(frame.data.length, 640 * 640 * 3);
  assert.equal(frame.index, 15);
  assert.equal(frame.timestampMs, 1500);
  assert.equal(src.nominalFps, 10);
  assert.deepEqual({ ...src.intrinsics }, { fx: 500, fy: 500, cx: 320, cy: 320 });
  assert.deepEqual(
    frame.truth!.map((o) => o.id),
    [1, 2],
  );
  await src.close();
  await assert.rejects(src.read(0), LookoutError, 'a closed source refuses to read');
});

test('rendering is deterministic by time, and different instants differ', async () => {
  const a = source('crowd-occlusion');
  const b = source('crowd-occlusion');
  const fa = await a.read(3200);
  const fb = await b.read(3200);
  assert.ok(Buffer.from(fa.data).equals(Buffer.from(fb.data)), 'same instant, same pixels');
  assert.deepEqual(fa.truth, fb.truth);
  const later = await a.read(3300);
  assert.ok(!Buffer.from(fa.data).equals(Buffer.from(later.data)));
  assert.notDeepEqual(fa.truth, later.truth);
});

test('the scenario loops while frame indices keep rising', async () => {
  const src = source('people-crossing');
  const durationMs = src.scenario.durationS * 1000;
  const first = await src.read(2000);
  const again = await src.read(2000 + 3 * durationMs);
  assert.ok(Buffer.from(first.data).equals(Buffer.from(again.data)));
  assert.deepEqual(first.truth, again.truth);
  assert.equal(again.index, first.index + (3 * durationMs) / 100);
  await assert.rejects(src.read(-1), (err: unknown) => err instanceof LookoutError && err.code === 'bad_request');
});

test('read() without a time renders the instant given by the clock', async () => {
  let now = 10_000;
  const scenario = loadScenario('people-crossing').scenario;
  const src = new SimFrameSource(scenario, { now: () => now });
  now += 2500;
  const frame = await src.read();
  const reference = await new SimFrameSource(scenario, { originMs: 0 }).read(2500);
  assert.ok(Buffer.from(frame.data).equals(Buffer.from(reference.data)));
  assert.equal(frame.timestampMs, 12_500, 'timestamps are the origin (creation time) plus the elapsed time');
  assert.equal(src.temperatureAt(), undefined, 'no script, no temperature');
});

test('ground-truth boxes and visibilities agree with the pixels drawn', async () => {
  const cases: [string, number[]][] = [
    ['people-crossing', [1, 6, 9.5]],
    ['crowd-occlusion', [2, 6.2, 7, 11]],
    ['vehicles', [0, 3, 6.5]],
    ['weapon-appears', [2, 8]],
    ['plates-and-signs', [4, 10]],
  ];
  let checked = 0;
  for (const [name, times] of cases) {
    const src = source(name);
    const colours = uniquelyColoured(src.scenario);
    const tol = src.scenario.background.sensorNoise + 1;
    for (const t of times) {
      const frame = await src.read(t * 1000);
      for (const obj of frame.truth!) {
        const bgr = colours.get(obj.id);
        if (!bgr) continue;
        const where = `${name} t=${t} object ${obj.id} (${obj.label})`;
        const seen = colourPixels(frame, bgr, tol);
        if (obj.visibility === 0) {
          assert.equal(seen.count, 0, `${where}: hidden, yet its colour is on screen`);
          continue;
        }
        assert.ok(seen.count > 0, `${where}: visible ${obj.visibility} but its colour is nowhere`);
        const [bx1, by1, bx2, by2] = obj.box;
        const [sx1, sy1, sx2, sy2] = seen.box as [number, number, number, number];
        assert.ok(
          sx1 >= Math.floor(bx1) && sy1 >= Math.floor(by1) && sx2 <= Math.ceil(bx2) && sy2 <= Math.ceil(by2),
          `${where}: colour at ${JSON.stringify(seen.box)} outside box ${JSON.stringify(obj.box)}`,
        );
        const inside = bx1 > 0 && by1 > 0 && bx2 < W && by2 < H;
        if (inside) {
          // The silhouette's area from the box; visible pixels over that area is the visibility.
          const area = silhouetteSpans(SHAPES[obj.label as keyof typeof SHAPES], obj.box).area;
          // Boxes are rounded to 0.01 px, which can move a few edge pixels of tiny objects.
          assert.ok(Math.abs(seen.count - obj.visibility * area) <= 0.03 * area + 4, `${where}: ${seen.count}/${area} pixels vs visibility ${obj.visibility}`);
          checked++;
        }
      }
    }
  }
  assert.ok(checked >= 20, `only ${checked} objects checked`);
});

test('occlusion in crowd-occlusion hides person 2 behind person 1 around t=7 s', async () => {
  const src = source('crowd-occlusion');
  const purple = hexToBgr('#8e24aa');
  const visibility = async (t: number) => truthOf(await src.read(t * 1000), 2)!.visibility;
  assert.ok((await visibility(4)) >= 0.95, 'in full view before');
  assert.ok((await visibility(10)) >= 0.95, 'in full view after');
  const partly = await visibility(6.1);
  assert.ok(partly > 0 && partly < 0.9, `partly covered while going behind (${partly})`);
  for (let t = 6.6; t <= 7.4; t += 0.2) assert.equal(await visibility(t), 0, `hidden at t=${t.toFixed(1)}`);
  const hiddenFrame = await src.read(7000);
  assert.equal(colourPixels(hiddenFrame, purple, 4).count, 0, 'none of its pixels are drawn');
  assert.ok(truthOf(hiddenFrame, 2)!.depthM > truthOf(hiddenFrame, 1)!.depthM, 'the hidden one is farther');
  for (let t = 0; t < 14; t += 0.5) assert.equal(truthOf(await src.read(t * 1000), 1)!.visibility, 1, 'the nearest person is never covered');
});

test('boxes are clipped to the frame and objects wholly outside are left out', async () => {
  const src = source('vehicles');
  const start = await src.read(0);
  const car = truthOf(start, 1)!;
  assert.equal(car.box[0], 0, 'clipped at the left edge');
  assert.ok(car.visibility > 0 && car.visibility < 0.3, `mostly off-frame (${car.visibility})`);
  assert.equal(truthOf(start, 2), undefined, 'the bus has not entered yet');
  assert.equal(truthOf(start, 3), undefined, 'the truck appears at t=4 s');
  const truck = truthOf(await src.read(5000), 3)!;
  assert.equal(truck.classId, 5);
  assert.equal(truck.box[0], 0);
  for (const o of start.truth!) for (const v of o.box) assert.ok(v >= 0 && v <= 640);
});

test('attached objects follow their parent and appear on time; plates carry no production class', async () => {
  const src = source('weapon-appears');
  assert.equal(truthOf(await src.read(3900), 2), undefined, 'no knife before t=4 s');
  for (const t of [4.1, 8, 11.5]) {
    const frame = await src.read(t * 1000);
    const person = truthOf(frame, 1)!;
    const knife = truthOf(frame, 2)!;
    assert.equal(knife.classId, 11);
    const personCx = (person.box[0] + person.box[2]) / 2;
    const knifeCx = (knife.box[0] + knife.box[2]) / 2;
    assert.ok(Math.abs(knifeCx - (personCx + (500 * 0.32) / person.depthM)) < 1, 'held at the offset given, scaled by depth');
    assert.ok(knife.depthM < person.depthM);
  }
  const plates = await source('plates-and-signs').read(6000);
  const plate = truthOf(plates, 2)!;
  assert.equal(plate.label, 'license_plate');
  assert.equal(plate.classId, -1);
  const car = truthOf(plates, 1)!;
  assert.ok(plate.box[0] > car.box[0] && plate.box[2] < car.box[2] && plate.box[3] <= car.box[3] + 0.5, 'the plate sits on the car');
});

test('box size follows the pinhole model at the object depth', async () => {
  const frame = await source('people-crossing').read(3000);
  for (const o of frame.truth!) {
    const h = o.box[3] - o.box[1];
    assert.ok(Math.abs(h / ((500 * 1.75) / o.depthM) - 1) < 0.002, `height ${h} at ${o.depthM} m`);
  }
});

test('scenarios resolve from the package, whatever the working directory', () => {
  const cwd = process.cwd();
  process.chdir(tmpdir());
  try {
    assert.equal(loadScenario('vehicles').name, 'vehicles');
  } finally {
    process.chdir(cwd);
  }
});

const logger = createLogger({ level: 'silent' });
const runtime = { kind: 'device' as const, id: 'cam-1', dataDir: tmpdir(), layer: 'layer0' as const };

test('the camera plugin provides a sim frame source through the loader', async () => {
  let got: { source: FrameSource; info: SimScenarioInfo } | undefined;
  const consumer = definePlugin({
    name: 'consumer',
    version: '1.0.0',
    core: '^1',
    layer: 'layer0',
    requires: [FrameSourceToken, SimScenarioToken],
    start(ctx) {
      got = { source: ctx.services.get(FrameSourceToken), info: ctx.services.get(SimScenarioToken) };
    },
  });
  const rt = await loadPlugins({
    plugins: [consumer, cameraPlugin],
    runtime,
    bus: new MemoryBus(),
    env: { LOOKOUT_SOURCE: 'sim', SIM_SCENARIO: 'thermal-soak' },
    logger,
  });
  try {
    assert.deepEqual(
      rt.plugins.map((p) => [p.name, p.state]),
      [
        ['camera', 'ok'],
        ['consumer', 'ok'],
      ],
    );
    const frame = await got!.source.read(1000);
    assert.equal(frame.data.length, 640 * 640 * 3);
    assert.equal(got!.info.name, 'thermal-soak');
    assert.equal(got!.info.temperatureAt(20_000), 78);
  } finally {
    await rt.stop();
  }
  await assert.rejects(got!.source.read(0), LookoutError, 'stopping the plugin closes its source');
});

test('the camera plugin defaults to people-crossing and refuses unknown sources and scenarios', async () => {
  assert.deepEqual(CameraConfigSchema.parse({}), { LOOKOUT_SOURCE: 'sim', SIM_SCENARIO: 'people-crossing' });
  // Essential, so that a refusal stops the load and is thrown as it is.
  const start = (env: Record<string, string>) => loadPlugins({ plugins: [cameraPlugin], runtime, bus: new MemoryBus(), env, logger, essential: ['camera'] });
  await assert.rejects(start({ LOOKOUT_SOURCE: 'rtsp' }), (err: unknown) => {
    assert.ok(err instanceof LookoutError && err.code === 'config_invalid');
    assert.match(err.message, /LOOKOUT_SOURCE/);
    assert.match(err.message, /rtsp/);
    assert.match(err.message, /sources are: sim/);
    return true;
  });
  await assert.rejects(start({ SIM_SCENARIO: 'no-such-scene' }), (err: unknown) => {
    assert.ok(err instanceof LookoutError && err.code === 'config_invalid');
    assert.match(err.message, /no-such-scene/);
    assert.match(err.message, /crowd-occlusion/);
    return true;
  });
});
