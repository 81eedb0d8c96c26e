import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LookoutError } from '../../../../../core/src/index.js';
import { sidecarNameOf } from '../../../../../core/src/contracts/index.js';
import { checkRecordingsRoot, isRecordingFileName, remotePathIn } from '../../../../../hub/plugins/device-ssh/src/recording-names.js';
import { isRecordingFileName as fromService } from '../../../../../hub/plugins/device-ssh/src/service.js';

const CHUNK = '20260101T000000000Z_000001.h265';
const badRequest = (err: unknown) => err instanceof LookoutError && err.code === 'bad_request';

describe('recording file names', () => {
  it('admits chunks, their sidecars and detection logs, and the index files', () => {
    for (const name of [CHUNK, sidecarNameOf(CHUNK), CHUNK.replace(/\.h265$/, '.dets.jsonl'), 'recent_manifest.jsonl', '.h265_status', 'cam_a-1.h265']) {
      assert.equal(isRecordingFileName(name), true, name);
      assert.equal(fromService(name), true, name);
    }
  });

  it('refuses paths, dotfiles, other files and odd bytes', () => {
    for (const name of [
      '',
      '.',
      '..',
      '../x.h265',
      '/etc/passwd',
      'a/b.h265',
      'a\\b.h265',
      `.${CHUNK}.part`,
      '.hidden.h265',
      `${CHUNK}\0`,
      `${CHUNK}\n`,
      ` ${CHUNK}`,
      'x..h265',
      'notes.txt',
      'x.dets.jsonl.h265.tmp',
      '.json',
      'recent_manifest.jsonl.bak',
      `${'a'.repeat(200)}.h265`,
    ]) {
      assert.equal(isRecordingFileName(name), false, JSON.stringify(name));
      assert.throws(() => remotePathIn('/data/recordings', name), badRequest, JSON.stringify(name));
    }
    assert.equal(isRecordingFileName(undefined as unknown as string), false);
  });

  it('joins a name to the root, the result directly in it', () => {
    assert.equal(remotePathIn('/data/recordings', CHUNK), `/data/recordings/${CHUNK}`);
    assert.equal(remotePathIn('/data/recordings/', CHUNK), `/data/recordings/${CHUNK}`);
    assert.equal(remotePathIn('/data//ext-recordings', '.h265_status'), '/data/ext-recordings/.h265_status');
  });

  it('refuses a root that is not a plain absolute directory', () => {
    for (const root of ['data/recordings', '/', '//', '/data/../etc', '/data/rec\0', '/data/rec\nordings', '']) {
      assert.throws(() => checkRecordingsRoot(root), badRequest, JSON.stringify(root));
    }
    assert.equal(checkRecordingsRoot("/data/it's recordings"), "/data/it's recordings");
  });
});
