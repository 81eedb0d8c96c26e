import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { runFfmpeg } from '../../../lib/media/ffmpeg-process.js';
import { boxOnPicture, detectorFrameOf } from '../../../core/src/contracts/detection-frame.js';
import { DetsMessageSchema, type DetsMessage } from '../../../core/src/contracts/dets-message.js';
import { LiveJpegResultSchema, type LiveJpegResult } from '../../../core/src/contracts/recording-tools.js';
import { FrameSourceToken } from '../../../plugins/camera/src/service.js';
import type { SimFrameSource } from '../../../plugins/camera/src/sim-frame-source.js';
import { EncodedVideoToken } from '../../../plugins/encode/src/service.js';
import { iou, type Box } from '../../../plugins/tracker/src/geometry/box.js';
import { BusRecorder } from '../../support/bus-recorder.js';
import { startPluginDevice } from '../../support/plugin-device.js';
import { scratchDir } from '../../support/scratch-dir.js';
import { waitFor } from '../../support/wait-for.js';

/**
 * Boxes where the objects are (issue 26 item 2): a real simulated device (sim camera, H.265 encoder at
 * a 16:9 size, detector) publishes dets on a real broker; get_live_jpeg takes a picture at yet another
 * size. The detector is the `sim` back-end with no noise, misses or false alarms: a test double at the
 * model's edge that answers the scene's ground truth in the detector frame, so this checks the
 * coordinate chain (detector frame -> dets -> rule -> picture), not a model (the project's test ONNX
 * model has random weights and finds no figures).
 */

let broker: EmbeddedBroker;
let observer: MqttBus;
before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  observer = await MqttBus.connect({ url: broker.url, clientId: 'boxes-observer', clean: true });
});
after(async () => {
  await observer.close();
  await broker.close();
});

/** Two people near the camera (large boxes) walking at 20 px/s, apart from each other all the clip. */
const SCENARIO = {
  name: 'boxes-walkers',
  durationS: 12,
  fps: 10,
  seed: 5,
  objects: [
    {
      id: 1,
      class: 'person',
      colour: '#d9482b',
      trajectory: [
        { t: 0, x: 80, y: 330, z: 2.5 },
        { t: 12, x: 320, y: 330, z: 2.5 },
      ],
    },
    {
      id: 2,
      class: 'person',
      colour: '#1e88e5',
      trajectory: [
        { t: 0, x: 570, y: 300, z: 3 },
        { t: 12, x: 450, y: 300, z: 3 },
      ],
    },
  ],
};
const MAX_SKEW_MS = 60;
const COLOUR: Record<number, [number, number, number]> = { 1: [0xd9, 0x48, 0x2b], 2: [0x1e, 0x88, 0xe5] };

/** The picture's pixels (RGB) decoded by ffmpeg. */
async function rgbOf(jpeg: Buffer): Promise<Buffer> {
  const args = ['-f', 'image2pipe', '-i', 'pipe:0', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'];
  return runFfmpeg(args, { input: jpeg, timeoutMs: 10_000, maxOutputBytes: 32 << 20 }, 'recording_unreadable');
}

/** The rectangle the pixels of one figure's colour cover in the picture: where the user sees the figure. */
function figureOnPicture(rgb: Buffer, w: number, h: number, [r, g, b]: [number, number, number]): Box | null {
  let x1 = w;
  let y1 = h;
  let x2 = -1;
  let y2 = -1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      if (Math.abs(rgb[i] - r) + Math.abs(rgb[i + 1] - g) + Math.abs(rgb[i + 2] - b) > 60) continue;
      x1 = Math.min(x1, x);
      y1 = Math.min(y1, y);
      x2 = Math.max(x2, x + 1);
      y2 = Math.max(y2, y + 1);
    }
  }
  return x2 < 0 ? null : [x1, y1, x2, y2];
}

/** The dets message whose frame is nearest in time to the picture, by the captured_at both carry. */
function detsAt(messages: DetsMessage[], capturedAt: string): DetsMessage | undefined {
  const at = Date.parse(capturedAt);
  let best: DetsMessage | undefined;
  for (const m of messages) {
    if (m.captured_at === undefined) continue;
    if (!best || Math.abs(Date.parse(m.captured_at) - at) < Math.abs(Date.parse(best.captured_at!) - at)) best = m;
  }
  return best;
}

test('published boxes, mapped by the one rule onto a snapshot, cover the figures the snapshot shows (IoU >= 0.9)', async () => {
  const scratch = await scratchDir('lookout-boxes-');
  const scenarioPath = join(scratch.dir, 'walkers.json');
  await writeFile(scenarioPath, JSON.stringify(SCENARIO));
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: ['die-temp', 'camera-profile', 'camera', 'encode', 'detector'],
    layer: 'layer1',
    env: {
      SIM_SCENARIO: scenarioPath,
      RF_DETR_BACKEND: 'sim',
      SIM_DET_JITTER_PX: '0',
      SIM_DET_MISS_RATE: '0',
      SIM_DET_FP_RATE: '0',
      // A 16:9 stream of the square sim frame: the picture's aspect is not the detector frame's.
      ENCODE_RESOLUTION: '640x360',
      ENCODE_FPS: '10',
      ENCODE_GOP: '10',
      LIVE_PORT: '0',
    },
  });
  const recorder = new BusRecorder(15_000);
  await observer.subscribe(`devices/${device.id}/dets`, recorder.handler);
  try {
    const video = device.runtime.service(EncodedVideoToken)!;
    await waitFor(() => video.latestGop().length >= 2, 'a GOP', 15_000);
    const source = device.runtime.service(FrameSourceToken)! as SimFrameSource;
    const origin = source.readSync(0).timestampMs;
    // The detector and the encoder read their own frames (10 fps each, phases apart): a picture is
    // compared with the dets of a frame at most MAX_SKEW_MS from it (figures move 1 px in that time).
    let compared = 0;
    for (let shot = 0; shot < 20 && compared < 3; shot++) {
      // 480 wide: the picture is neither the detector frame's size nor the stream's.
      const jpeg: LiveJpegResult = LiveJpegResultSchema.parse(await device.runtime.tools.call('get_live_jpeg', { w: 480, q: 90 }));
      const picture = { width: jpeg.width, height: jpeg.height };
      assert.deepEqual(picture, { width: 480, height: 270 });
      // What a viewer had in hand when the picture arrived: the newest boxes (the console's old pairing), for the report.
      const newest = DetsMessageSchema.parse(recorder.messages.at(-1)!.body);
      const at = Date.parse(jpeg.captured_at);
      await recorder.until((m) => Date.parse(String(m.body.captured_at)) > at, 'dets after the picture');
      const paired = detsAt(
        recorder.messages.map((m) => DetsMessageSchema.parse(m.body)),
        jpeg.captured_at,
      );
      assert.ok(paired, 'dets carry captured_at, so they pair with the picture');
      assert.deepEqual(detectorFrameOf(paired), { width: 640, height: 640 }, 'the frame the boxes are in travels with them');
      const skewMs = Math.abs(Date.parse(paired.captured_at!) - at);
      if (skewMs <= MAX_SKEW_MS) {
        compared++;
        const rgb = await rgbOf(Buffer.from(jpeg.jpeg_base64, 'base64'));
        const truth = source.readSync(at - origin).truth!;
        assert.equal(truth.length, 2);
        for (const t of truth) {
          const seen = figureOnPicture(rgb, picture.width, picture.height, COLOUR[t.id]);
          assert.ok(seen, `figure ${t.id} is on the picture`);
          // The scene's ground truth drawn by the rule lands on the figure: the picture is the frame, stretched.
          const truthOnPicture = boxOnPicture(t.box, detectorFrameOf(paired), picture);
          assert.ok(iou(truthOnPicture, seen) >= 0.9, `ground truth ${t.id} on the picture ${fmt(truthOnPicture)} vs figure ${fmt(seen)}`);
          // The published box of that figure (the one overlapping it most), by the same rule, lands on it too.
          const best = Math.max(...paired.dets.map((d) => iou(boxOnPicture(d.b, detectorFrameOf(paired), picture), seen)));
          const old = Math.max(0, ...newest.dets.map((d) => iou(boxOnPicture(d.b, detectorFrameOf(newest), picture), seen)));
          console.log(
            `figure ${t.id}: IoU ${best.toFixed(3)} paired by captured_at (${skewMs} ms apart); ` +
              `${old.toFixed(3)} with the newest dets when the picture arrived (${Date.parse(newest.captured_at!) - at} ms newer)`,
          );
          assert.ok(best >= 0.9, `published box of figure ${t.id}: best IoU ${best.toFixed(3)} with the figure ${fmt(seen)}`);
        }
      }
      await waitFor(() => video.latestGop().at(-1)!.capturedAtMs > at + 150, 'a newer picture', 10_000);
    }
    assert.equal(compared, 3, 'three pictures had dets of a frame close enough in time');
  } finally {
    await device.stop();
    await scratch.cleanup();
  }
});

function fmt(b: readonly number[]): string {
  return `[${b.map((v) => v.toFixed(1)).join(', ')}]`;
}
