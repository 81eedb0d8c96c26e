/**
 * get_recording_status from an SSH discovery: storage it could not measure is said to be unknown
 * (storage_known false, the fields named, the recommendation says so) rather than passed off as a
 * reading; whether the recorder writes follows the newest chunk's age against the chunk length
 * (listings never show the dotted `.part` in progress).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecordingStatusResultSchema } from '../../../../../core/src/contracts/index.js';
import type { RemoteFile } from '../../../../../hub/plugins/device-ssh/src/service.js';
import type { RecordingsAccess } from '../../../../../hub/plugins/media/src/recordings-access.js';
import { recordingStatusOverSsh } from '../../../../../hub/plugins/media/src/ssh-discovery.js';
import { scratchDir } from '../../../../support/scratch-dir.js';
import { chunkNameAt, makeChunk } from './chunk-fixtures.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const signal = new AbortController().signal;

function access(files: RemoteFile[], contents: Record<string, unknown> = {}): RecordingsAccess {
  return {
    list: () => Promise.resolve(files),
    read: (_id: string, name: string) =>
      name in contents ? Promise.resolve(Buffer.from(JSON.stringify(contents[name]))) : Promise.reject(new Error(`no ${name}`)),
    download: () => Promise.reject(new Error('not here')),
  };
}

/** Chunks of `seconds` each, the newest closed `ageMs` before NOW. */
function chunks(n: number, seconds: number, ageMs: number): RemoteFile[] {
  return Array.from({ length: n }, (_, i) => {
    const end = NOW - ageMs - (n - 1 - i) * seconds * 1000;
    return { name: chunkNameAt(new Date(end - seconds * 1000), i + 1), size: 1000, mtimeMs: end };
  });
}

describe('recordingStatusOverSsh', () => {
  it('says storage is unknown when neither a status file nor a health message measured it', async () => {
    const s = await recordingStatusOverSsh(access(chunks(2, 10, 1000)), 'cam', 'sftp', signal, undefined, 'tool down', NOW);
    RecordingStatusResultSchema.parse(s);
    assert.equal(s.storage_known, false);
    assert.deepEqual(s.storage_unmeasured, ['storage_health', 'storage_free_gb', 'storage_used_pct']);
    assert.match(s.recommendation, /could not be measured over SSH/);
  });

  it('names only the fields a partial health message left out', async () => {
    const s = await recordingStatusOverSsh(
      access(chunks(2, 10, 1000)),
      'cam',
      'sftp',
      signal,
      { from: 'health message', storage_health: 'OK', storage_free_gb: 3 },
      'x',
      NOW,
    );
    assert.equal(s.storage_health, 'OK');
    assert.equal(s.storage_free_gb, 3);
    assert.equal(s.storage_known, false);
    assert.deepEqual(s.storage_unmeasured, ['storage_used_pct']);
    assert.match(s.recommendation, /storage_used_pct could not be measured over SSH/);
  });

  it('is measured when the recorder status file says all of it', async () => {
    const files = [...chunks(1, 10, 1000), { name: '.h265_status', size: 100, mtimeMs: NOW }];
    const s = await recordingStatusOverSsh(
      access(files, { '.h265_status': { storage: { health: 'WARNING', free_gb: 1.5, used_pct: 91 } } }),
      'cam',
      'sftp',
      signal,
      undefined,
      'x',
      NOW,
    );
    assert.equal(s.storage_known, true);
    assert.deepEqual(s.storage_unmeasured, []);
    assert.equal(s.storage_used_pct, 91);
  });

  it('judges writing by the newest chunk\u2019s age against the chunk length (start times, else its sidecar)', async () => {
    // 10 s chunks: closed 20 s ago is writing, 40 s ago has stalled (the fixed 180 s grace would call both writing).
    const fresh = await recordingStatusOverSsh(access(chunks(3, 10, 20_000)), 'cam', 'sftp', signal, undefined, 'x', NOW);
    assert.equal(fresh.is_writing_data, true);
    const stalled = await recordingStatusOverSsh(access(chunks(3, 10, 40_000)), 'cam', 'sftp', signal, undefined, 'x', NOW);
    assert.equal(stalled.is_writing_data, false);
    assert.match(stalled.recommendation, /stalled since .* within 30 s/);
    // One chunk only: its sidecar (a real one) gives the length, 10 s: closed 40 s ago has stalled.
    const scratch = await scratchDir('ssh-status-');
    try {
      const sidecar = await makeChunk(scratch.dir, { seconds: 10, fps: 1, startedAt: new Date(NOW - 50_000) });
      const json = `${sidecar.name.replace(/\.h265$/, '')}.json`;
      const files = [
        { name: sidecar.name, size: sidecar.size_bytes, mtimeMs: NOW - 40_000 },
        { name: json, size: 500, mtimeMs: NOW - 40_000 },
      ];
      const withSidecar = await recordingStatusOverSsh(access(files, { [json]: sidecar }), 'cam', 'sftp', signal, undefined, 'x', NOW);
      assert.equal(withSidecar.is_writing_data, false);
    } finally {
      await scratch.cleanup();
    }
    // Neither: three 60 s chunks of grace.
    const [one] = chunks(1, 5, 40_000);
    const unknownLength = await recordingStatusOverSsh(access([one]), 'cam', 'sftp', signal, undefined, 'x', NOW);
    assert.equal(unknownLength.is_writing_data, true);
  });
});
