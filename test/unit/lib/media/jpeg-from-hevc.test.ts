/** The last picture of a real H.265 stream as a JPEG of the asked width; bad input is a typed error. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { jpegFromHevc, mjpegQscale } from '../../../../lib/media/jpeg-from-hevc.js';
import { runFfmpeg } from '../../../../lib/media/ffmpeg-process.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';

const stream = execFileSync('ffmpeg', [
  ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=5', '-t', '2'],
  ...['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'keyint=5:min-keyint=5:scenecut=0:log-level=error', '-f', 'hevc', 'pipe:1'],
]);

function jpegSize(jpeg: Buffer): { width: number; height: number } {
  const out = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', 'pipe:0'], { input: jpeg }).toString().trim();
  const [width, height] = out.split(',').map(Number);
  return { width, height };
}

describe('jpegFromHevc', () => {
  it('encodes the last picture at the asked width, keeping the aspect ratio', async () => {
    const jpeg = await jpegFromHevc(stream, { width: 160, quality: 70, timeoutMs: 10_000 });
    assert.equal(jpeg[0], 0xff);
    assert.equal(jpeg[1], 0xd8);
    assert.deepEqual(jpegSize(jpeg), { width: 160, height: 120 });
  });

  it('a lower quality gives a smaller picture', async () => {
    const [hi, lo] = await Promise.all([
      jpegFromHevc(stream, { width: 320, quality: 95, timeoutMs: 10_000 }),
      jpegFromHevc(stream, { width: 320, quality: 5, timeoutMs: 10_000 }),
    ]);
    assert.ok(lo.length < hi.length, `${lo.length} < ${hi.length}`);
  });

  it('maps quality 1-100 onto mjpeg 31-2', () => {
    assert.equal(mjpegQscale(100), 2);
    assert.equal(mjpegQscale(1), 31);
    assert.equal(mjpegQscale(500), 2);
  });

  it('refuses bytes that hold no picture with recording_unreadable', async () => {
    await assert.rejects(
      jpegFromHevc(Buffer.from('garbage'), { width: 100, quality: 50, timeoutMs: 5000 }),
      (e: LookoutError) => e.code === 'recording_unreadable',
    );
  });

  it('a run past its timeout is killed and says so', async () => {
    await assert.rejects(
      runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=rate=5', '-f', 'null', '-'], { timeoutMs: 300 }),
      (e: LookoutError) => e.code === 'transcode_failed' && /300 ms/.test(e.message),
    );
  });

  it('an aborted run rejects, and too much output is refused', async () => {
    const aborter = new AbortController();
    const run = runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=rate=5', '-f', 'null', '-'], { timeoutMs: 10_000, signal: aborter.signal });
    aborter.abort();
    await assert.rejects(run, /cancelled/);
    // A signal already aborted starts nothing.
    await assert.rejects(runFfmpeg(['-version'], { timeoutMs: 10_000, signal: aborter.signal }), /cancelled/);
    await assert.rejects(
      runFfmpeg(['-f', 'lavfi', '-i', 'testsrc', '-t', '1', '-f', 'rawvideo', 'pipe:1'], { timeoutMs: 10_000, maxOutputBytes: 1000 }),
      /more than 1000 bytes/,
    );
  });
});
