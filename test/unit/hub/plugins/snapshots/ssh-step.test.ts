/**
 * The SSH step's memory with a real chunk and real ffmpeg: the downloaded chunk is read in pieces
 * into a GopTail bounded by the tail setting (LOOKOUT_HUB_SNAPSHOT_TAIL_MAX_BYTES), never read
 * whole nor held in a tail as large as the chunk, and the last picture still comes out.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DeviceSsh } from '../../../../../hub/plugins/device-ssh/src/service.js';
import type { RegisteredDevice } from '../../../../../hub/plugins/registry/src/service.js';
import { GopTail } from '../../../../../hub/plugins/snapshots/src/gop-tail.js';
import { snapshotOverSsh } from '../../../../../hub/plugins/snapshots/src/ssh-step.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';
import { chunkNameAt, makeChunk } from '../media/chunk-fixtures.js';

const PIECE_LIMIT = 256 * 1024;
const TAIL_MAX = 65_536;

describe('snapshotOverSsh', () => {
  let scratch: ScratchDir;
  let remote: string;
  let name: string;
  let size: number;

  before(async () => {
    scratch = await scratchDir('ssh-step-');
    remote = join(scratch.dir, 'remote');
    const sidecar = await makeChunk(join(scratch.dir, 'src'), { seconds: 2, fps: 5 });
    const one = await readFile(join(scratch.dir, 'src', sidecar.name));
    // Many GOPs: the chunk repeated (each copy starts with its parameter sets and a keyframe), over 1 MiB.
    const copies = Math.ceil((1.2 * 1024 * 1024) / one.length);
    name = chunkNameAt(new Date(), 1);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(remote, { recursive: true });
    await writeFile(join(remote, name), Buffer.concat(Array.from({ length: copies }, () => one)));
    size = (await stat(join(remote, name))).size;
  });
  after(() => scratch.cleanup());

  it('streams the chunk into a tail bounded by the tail setting, not the chunk size, and decodes its last picture', async () => {
    const ssh = {
      configured: true,
      recordingsRoot: () => remote,
      list: () => Promise.resolve([{ name, size, mtimeMs: Date.now() }]),
      download: async (_id: string, n: string, to: string) => {
        await copyFile(join(remote, n), to);
        return { bytes: size };
      },
    } as unknown as DeviceSsh;
    const device = { deviceId: 'cam-1', ssh: { host: '127.0.0.1', port: 22, user: 'x', root: remote } } as unknown as RegisteredDevice;

    const pieces: number[] = [];
    const bounds: number[] = [];
    // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, called with its `this`
    const push = GopTail.prototype.push;
    GopTail.prototype.push = function (this: GopTail, data: Uint8Array) {
      pieces.push(data.length);
      bounds.push((this as unknown as { maxBytes: number }).maxBytes);
      push.call(this, data);
    };
    try {
      const snap = await snapshotOverSsh(
        ssh,
        { device, width: 160, quality: 60, signal: new AbortController().signal },
        {
          maxChunkBytes: 128 * 1024 * 1024,
          tailMaxBytes: TAIL_MAX,
          timeoutMs: 30_000,
          decodeTimeoutMs: 10_000,
        },
      );
      assert.equal(snap.source, 'ssh');
      assert.equal(snap.chunk, name);
      const width = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=width', '-of', 'csv=p=0', 'pipe:0'], { input: snap.jpeg })
        .toString()
        .trim();
      assert.equal(width, '160');
    } finally {
      GopTail.prototype.push = push;
    }
    assert.ok(size > 4 * PIECE_LIMIT, `chunk of ${size} bytes`);
    assert.ok(pieces.length > 1, 'read in pieces');
    assert.ok(Math.max(...pieces) <= PIECE_LIMIT, `largest piece ${Math.max(...pieces)}`);
    assert.equal(
      pieces.reduce((a, b) => a + b, 0),
      size,
    );
    assert.deepEqual([...new Set(bounds)], [TAIL_MAX]);
  });
});
