import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { codecOf, fragment, initSegment } from '../../../../../hub/plugins/live-mp4/src/fmp4-muxer.js';
import { spsSize } from '../../../../../hub/plugins/live-mp4/src/h264-sps.js';

const run = promisify(execFile);

/** Real H.264 from ffmpeg (libx264 baseline, as the device's second output): its NAL units by picture. */
async function encodedPictures(dir: string, size: string, frames: number): Promise<Buffer[][]> {
  const file = join(dir, 'in.h264');
  await run('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${size}:rate=5`,
    '-frames:v',
    String(frames),
    '-c:v',
    'libx264',
    '-profile:v',
    'baseline',
    '-g',
    '5',
    '-bsf:v',
    'h264_mp4toannexb',
    '-f',
    'h264',
    file,
  ]);
  const bytes = await readFile(file);
  const units: Buffer[] = [];
  let start = -1;
  for (let i = 0; i + 3 <= bytes.length; i++) {
    if (bytes[i] === 0 && bytes[i + 1] === 0 && bytes[i + 2] === 1) {
      if (start >= 0) units.push(bytes.subarray(start, i - (bytes[i - 1] === 0 ? 1 : 0)));
      start = i + 3;
    }
  }
  units.push(bytes.subarray(start));
  const pictures: Buffer[][] = [];
  let current: Buffer[] = [];
  for (const u of units) {
    current.push(u);
    const type = u[0] & 0x1f;
    if (type === 1 || type === 5) {
      pictures.push(current);
      current = [];
    }
  }
  return pictures;
}

describe('fragmented MP4 of H.264 pictures', () => {
  it('makes an init segment and one fragment per picture that ffprobe reads back, size, codec and timing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fmp4-'));
    try {
      const pictures = await encodedPictures(dir, '320x240', 10);
      assert.equal(pictures.length, 10);
      const sps = pictures[0].find((n) => (n[0] & 0x1f) === 7)!;
      const pps = pictures[0].find((n) => (n[0] & 0x1f) === 8)!;
      assert.deepEqual(spsSize(sps), { width: 320, height: 240 });
      assert.match(codecOf(sps), /^avc1\.42[0-9a-f]{4}$/);
      const parts = [initSegment(sps, pps, 320, 240)];
      pictures.forEach((nals, i) => {
        const samples = nals.filter((n) => ![7, 8, 9].includes(n[0] & 0x1f));
        parts.push(
          fragment(
            i + 1,
            i * 18_000,
            18_000,
            samples,
            nals.some((n) => (n[0] & 0x1f) === 5),
          ),
        );
      });
      const file = join(dir, 'out.mp4');
      await writeFile(file, Buffer.concat(parts));
      const { stdout } = await run('ffprobe', [
        '-v',
        'error',
        '-count_frames',
        '-show_entries',
        'stream=codec_name,width,height,nb_read_frames:format=duration',
        '-of',
        'json',
        file,
      ]);
      const probe = JSON.parse(stdout);
      assert.equal(probe.streams[0].codec_name, 'h264');
      assert.equal(probe.streams[0].width, 320);
      assert.equal(probe.streams[0].height, 240);
      assert.equal(Number(probe.streams[0].nb_read_frames), 10);
      assert.equal(Number(probe.format.duration), 2);
      // Decoding every frame finds no error: the samples are the pictures as they were.
      const decoded = await run('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']);
      assert.equal(decoded.stderr, '');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads the cropped size of a size that is no multiple of 16', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fmp4-'));
    try {
      const pictures = await encodedPictures(dir, '330x186', 1);
      const sps = pictures[0].find((n) => (n[0] & 0x1f) === 7)!;
      assert.deepEqual(spsSize(sps), { width: 330, height: 186 });
      assert.equal(spsSize(Buffer.from([0x67, 0x42])), undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
