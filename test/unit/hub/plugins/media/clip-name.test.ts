import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LookoutError } from '../../../../../core/src/index.js';
import { clipName } from '../../../../../hub/plugins/media/src/clip-route.js';

describe('clip file names', () => {
  it('tells the two variants apart', () => {
    assert.deepEqual(clipName('20250101T120000000Z_000001.mp4'), { chunk: '20250101T120000000Z_000001.h265', variant: 'h264' });
    assert.deepEqual(clipName('20250101T120000000Z_000001.hevc.mp4'), { chunk: '20250101T120000000Z_000001.h265', variant: 'hevc' });
  });
  it('refuses anything that is not one chunk file name', () => {
    for (const bad of [
      '../x.mp4',
      '..%2Fx.mp4',
      '/etc/passwd.mp4',
      '.hidden.mp4',
      'a/b.mp4',
      'a\\b.mp4',
      'x.h265',
      '.mp4',
      'a..b.mp4',
      `${'a'.repeat(200)}.mp4`,
      'x.mp4\u0000',
    ]) {
      assert.throws(
        () => clipName(bad),
        (e: unknown) => e instanceof LookoutError && e.code === 'bad_request',
        bad,
      );
    }
  });
});
