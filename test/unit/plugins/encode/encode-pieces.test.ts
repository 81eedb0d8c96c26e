import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EncodeConfigSchema } from '../../../../plugins/encode/src/config.js';
import { encoderSettings } from '../../../../plugins/encode/src/encode-settings.js';
import { libx265Args } from '../../../../plugins/encode/src/ffmpeg-args.js';
import { GopBuffer } from '../../../../plugins/encode/src/gop-buffer.js';
import { RateWindow } from '../../../../plugins/encode/src/rate-window.js';
import { jpegSize } from '../../../../plugins/encode/src/jpeg-size.js';
import type { EncodedPicture } from '../../../../plugins/encode/src/service.js';

const PROFILE = { resolution: '1280x720', fps: 15, bitrate_kbps: 2000, gop: 30, rate_control: 'CBR' as const };

test('settings come from the profile; each ENCODE_* key overrides its field alone', () => {
  const plain = encoderSettings(PROFILE, EncodeConfigSchema.parse({}));
  assert.deepEqual(plain, { width: 1280, height: 720, fps: 15, gop: 30, bitrateKbps: 2000, rateControl: 'CBR' });
  const some = encoderSettings(PROFILE, EncodeConfigSchema.parse({ ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5' }));
  assert.deepEqual(some, { width: 320, height: 240, fps: 5, gop: 30, bitrateKbps: 2000, rateControl: 'CBR' });
  // No camera-profile plugin: the shipped default profile.
  assert.deepEqual(encoderSettings(undefined, EncodeConfigSchema.parse({})), {
    width: 1920,
    height: 1080,
    fps: 15,
    gop: 30,
    bitrateKbps: 4000,
    rateControl: 'VBR',
  });
  // 4:2:0 wants even sizes.
  assert.equal(encoderSettings(PROFILE, EncodeConfigSchema.parse({ ENCODE_RESOLUTION: '321x241' })).width, 320);
  assert.throws(() => EncodeConfigSchema.parse({ ENCODE_RESOLUTION: 'big' }));
  assert.throws(() => EncodeConfigSchema.parse({ LOOKOUT_TOOL_TOKEN: 'short' }));
});

test('libx265 arguments: a keyframe exactly every gop pictures with its parameter sets, no B-frames, scaled to the profile', () => {
  const input = { width: 640, height: 640, pixelFormat: 'bgr24' as const };
  const args = libx265Args({ width: 320, height: 240, fps: 5, gop: 10, bitrateKbps: 500, rateControl: 'CBR' }, input);
  const at = (flag: string) => args[args.indexOf(flag) + 1];
  assert.equal(at('-s'), '640x640');
  assert.equal(at('-r'), '5');
  assert.equal(at('-vf'), 'scale=320:240');
  assert.equal(at('-c:v'), 'libx265');
  assert.equal(at('-f'), 'rawvideo');
  assert.equal(args.at(-2), 'hevc');
  const x265 = at('-x265-params').split(':');
  for (const p of ['keyint=10', 'min-keyint=10', 'scenecut=0', 'bframes=0', 'repeat-headers=1']) assert.ok(x265.includes(p), p);
  assert.equal(at('-maxrate'), '500k', 'CBR caps the rate at the target');
  const vbr = libx265Args({ width: 640, height: 640, fps: 5, gop: 10, bitrateKbps: 500, rateControl: 'VBR' }, input);
  assert.equal(vbr[vbr.indexOf('-maxrate') + 1], '1000k');
  assert.ok(!vbr.includes('-vf'), 'no scaling when the sizes match');
});

function picture(index: number, keyframe: boolean, bytes = 10): EncodedPicture {
  return { index, keyframe, data: Buffer.alloc(bytes), capturedAtMs: index, generation: 1 };
}

test('the GOP buffer holds the pictures since the latest keyframe, and lets go of one that outgrows its bound', () => {
  const gop = new GopBuffer(100);
  gop.add(picture(0, false));
  assert.equal(gop.snapshot().length, 0, 'nothing before the first keyframe');
  gop.add(picture(1, true));
  gop.add(picture(2, false));
  assert.deepEqual(
    gop.snapshot().map((p) => p.index),
    [1, 2],
  );
  gop.add(picture(3, true));
  assert.deepEqual(
    gop.snapshot().map((p) => p.index),
    [3],
  );
  for (let i = 4; i < 20; i++) gop.add(picture(i, false));
  assert.equal(gop.snapshot().length, 0, 'over the bound: emptied (a GOP without its keyframe decodes to nothing)');
  gop.add(picture(20, false));
  assert.equal(gop.snapshot().length, 0, 'and it waits for the next keyframe');
  gop.add(picture(21, true));
  assert.deepEqual(
    gop.snapshot().map((p) => p.index),
    [21],
  );
  assert.ok(gop.byteLength <= 100);
});

test('rates are measured over the window, from the first sample while the window is not full yet', () => {
  let now = 0;
  const w = new RateWindow(2000, () => now);
  assert.deepEqual(w.rates(), { fps: 0, kbps: 0 });
  // 10 pictures a second of 1000 bytes: 10 fps, 80 kbit/s.
  for (let i = 0; i < 50; i++) {
    w.add(1000);
    now += 100;
  }
  const r = w.rates();
  // The window holds 19 or 20 of them depending on where its edge falls between two pictures.
  assert.ok(r.fps >= 9.5 && r.fps <= 10, `${r.fps} fps`);
  assert.ok(r.kbps >= 76 && r.kbps <= 80, `${r.kbps} kbps`);
  now += 3000;
  assert.deepEqual(w.rates(), { fps: 0, kbps: 0 }, 'nothing in the window: zero');
  w.reset();
  w.add(500);
  assert.ok(w.rates().fps <= 1, 'one picture does not read as a high rate');
});

test('jpegSize reads the frame size from the SOF marker', () => {
  // SOI, APP0 (length 16), SOF0 with height 240 and width 320.
  const app0 = [0xff, 0xe0, 0x00, 0x10, ...Array<number>(14).fill(0)];
  const sof0 = [0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0xf0, 0x01, 0x40, 0x03, ...Array<number>(9).fill(0)];
  assert.deepEqual(jpegSize(Uint8Array.from([0xff, 0xd8, ...app0, ...sof0])), { width: 320, height: 240 });
  assert.equal(jpegSize(Uint8Array.from([0xff, 0xd8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])), undefined);
});
