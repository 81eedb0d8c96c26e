/**
 * The local recordings folder and the chunk fetcher with real files: a symlink in the folder
 * (pointing outside it) is neither listed, read nor copied, as over SFTP; a chunk the folder lacks
 * is still fetched over SFTP; the sources a crashed hub left are swept at start.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, symlink, writeFile, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LookoutError } from '../../../../../core/src/index.js';
import type { DeviceSsh } from '../../../../../hub/plugins/device-ssh/src/service.js';
import { DeviceHttpRecordings } from '../../../../../hub/plugins/media/src/device-http-recordings.js';
import { fetchChunk, sweepSources, type FetcherDeps } from '../../../../../hub/plugins/media/src/chunk-fetcher.js';
import { LocalRecordings } from '../../../../../hub/plugins/media/src/recordings-access.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';

const CHUNK = '20250101T120000000Z_000001.h265';
const LINKED = '20250101T120100000Z_000002.h265';
const isCode = (code: string) => (e: unknown) => e instanceof LookoutError && e.code === code;

describe('LocalRecordings and the chunk fetcher', () => {
  let scratch: ScratchDir;
  let local: LocalRecordings;
  let secret: string;

  before(async () => {
    scratch = await scratchDir('media-local-');
    const root = join(scratch.dir, 'devices', 'cam-1');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, CHUNK), Buffer.alloc(1000, 1));
    secret = join(scratch.dir, 'outside-secret');
    await writeFile(secret, 'not a recording');
    // A chunk name that is a symlink to a file outside the recordings folder.
    await symlink(secret, join(root, LINKED));
    await symlink(secret, join(root, `${LINKED.replace(/\.h265$/, '')}.json`));
    local = new LocalRecordings(join(scratch.dir, 'devices', '{device}'));
  });
  after(() => scratch.cleanup());

  it('lists regular files only: the symlinks are left out', async () => {
    const names = (await local.list('cam-1', 'sftp')).map((f) => f.name);
    assert.deepEqual(names, [CHUNK]);
  });

  it('reads and downloads regular files, and refuses a symlink as not found', async () => {
    assert.equal((await local.read('cam-1', CHUNK, 4096)).length, 1000);
    await assert.rejects(local.read('cam-1', `${LINKED.replace(/\.h265$/, '')}.json`, 4096), isCode('recording_not_found'));
    const out = join(scratch.dir, 'out.h265');
    assert.deepEqual(await local.download('cam-1', CHUNK, out), { bytes: 1000 });
    const linkedOut = join(scratch.dir, 'linked-out.h265');
    await assert.rejects(local.download('cam-1', LINKED, linkedOut), isCode('recording_not_found'));
    assert.ok(!(await readdir(scratch.dir)).some((n) => n.startsWith('linked-out')), 'nothing copied');
  });

  it('fetches a chunk the local folder lacks over SFTP', async () => {
    const remote = join(scratch.dir, 'remote');
    await mkdir(remote, { recursive: true });
    const only = '20250101T120200000Z_000003.h265';
    await writeFile(join(remote, only), Buffer.alloc(777, 7));
    const downloads: string[] = [];
    const ssh = {
      configured: true,
      download: async (_id: string, name: string, to: string) => {
        downloads.push(name);
        await copyFile(join(remote, name), to);
        return { bytes: 777 };
      },
      read: () => Promise.reject(new LookoutError('recording_not_found', 'no sidecar')),
      list: () => Promise.resolve([]),
    } as unknown as DeviceSsh;
    const deps: FetcherDeps = {
      dir: join(scratch.dir, 'sources'),
      // Not registered: the device's own tool server cannot be asked.
      device: new DeviceHttpRecordings({ device: () => undefined, credential: () => undefined }),
      ssh: () => ssh,
      local,
      timeoutMs: 10_000,
      knownFps: () => 5,
      signal: new AbortController().signal,
    };
    const src = await fetchChunk(deps, 'cam-1', only);
    assert.deepEqual(downloads, [only]);
    assert.equal((await readFile(src.path)).length, 777);
    await src.release();
    // Neither source has it: not found.
    await assert.rejects(fetchChunk(deps, 'cam-1', '20250101T120300000Z_000004.h265'), isCode('recording_not_found'));
    // Local lacks it and SFTP cannot be reached: not "no such chunk" (the device may have it).
    const down = { ...deps, ssh: () => ({ ...ssh, download: () => Promise.reject(new LookoutError('ssh_timeout', 'no answer')) }) as unknown as DeviceSsh };
    await assert.rejects(fetchChunk(down, 'cam-1', only), isCode('recordings_unavailable'));
  });

  it('sweeps the chunks and partial downloads a crash left in the sources folder', async () => {
    const dir = join(scratch.dir, 'crashed-sources');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, '0123456789abcdef.h265'), Buffer.alloc(100));
    await writeFile(join(dir, 'fedcba9876543210.h265.part'), Buffer.alloc(100));
    assert.equal(await sweepSources(dir), 2);
    assert.deepEqual(await readdir(dir), []);
    // A first start: the folder is made.
    assert.equal(await sweepSources(join(scratch.dir, 'new-sources')), 0);
  });
});
