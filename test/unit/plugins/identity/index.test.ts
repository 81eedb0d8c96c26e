import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { loadPlugins, type LoadedRuntime } from '../../../../core/src/plugin/loader.js';
import identity from '../../../../plugins/identity/src/index.js';
import { createSelfSignedCertificate } from '../../../../lib/tls/self-signed-lazy.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../../support/small-filesystem.js';
import { waitFor } from '../../../support/wait-for.js';

const logger = createLogger({ level: 'silent' });

interface IdentityAnswer {
  cert_fingerprint: string | null;
  key_durable: boolean | null;
  key_durable_reason: string | null;
}

describe('identity on a full data filesystem', { skip: cannotMount() }, () => {
  let disk: SmallFilesystem | undefined;
  before(async () => {
    disk = await mountSmallFilesystem({ sizeKiB: 128, prefix: 'lookout-identity-' });
  });
  after(async () => {
    await disk?.unmount();
  });

  async function start(dataDir: string, env: Record<string, string> = {}): Promise<{ loaded: LoadedRuntime; bus: MemoryBus; stop: () => Promise<void> }> {
    const bus = new MemoryBus();
    const runtime = { kind: 'device' as const, id: 'cam-id', dataDir, layer: 'layer0' as const };
    const loaded = await loadPlugins({ plugins: [identity], runtime, bus, logger, env: { IDENTITY_SAVE_RETRY_MS: '50', ...env } });
    return {
      loaded,
      bus,
      stop: async () => {
        await loaded.stop();
        await bus.close();
      },
    };
  }
  const state = (loaded: LoadedRuntime) => loaded.plugins.find((p) => p.name === 'identity')!;
  const ask = async (loaded: LoadedRuntime) => (await loaded.tools.call('get_device_identity', {})) as IdentityAnswer;

  it('starts degraded with the key in memory, and writes that key once space returns', async () => {
    const dataDir = join(disk!.dir, 'a');
    const config = join(dataDir, 'data', 'config');
    await mkdir(config, { recursive: true });
    disk!.fill();
    const { loaded, stop } = await start(dataDir);
    try {
      assert.equal(state(loaded).state, 'degraded');
      assert.match(state(loaded).message!, /device key is not yet durable, held in memory only \(cannot write .*shadow_peer\.key: ENOSPC/);
      const unsaved = await ask(loaded);
      assert.deepEqual([unsaved.key_durable, typeof unsaved.cert_fingerprint], [false, 'string']);
      assert.match(unsaved.key_durable_reason!, /ENOSPC/);
      await new Promise((r) => setTimeout(r, 150)); // a few failed retries
      // A retry in flight holds its temp file for a moment; a leftover would stay.
      await waitFor(() => readdirSync(config).length === 0, 'failed retries to leave nothing behind');

      disk!.free();
      await waitFor(() => state(loaded).state === 'ok', 'identity to be ok again');
      const saved = await ask(loaded);
      assert.deepEqual([saved.key_durable, saved.key_durable_reason, saved.cert_fingerprint], [true, null, unsaved.cert_fingerprint]);
      assert.equal(new X509Certificate(await readFile(join(config, 'shadow_peer.crt'))).fingerprint256, unsaved.cert_fingerprint);
      assert.deepEqual(readdirSync(config).sort(), ['shadow_peer.crt', 'shadow_peer.key']);
    } finally {
      await stop();
      disk!.free();
    }
  });

  it('never overwrites a certificate provisioned while its own key waited in memory', async () => {
    const dataDir = join(disk!.dir, 'b');
    const config = join(dataDir, 'data', 'config');
    await mkdir(config, { recursive: true });
    disk!.fill();
    const { loaded, stop } = await start(dataDir);
    try {
      assert.equal(state(loaded).state, 'degraded');
      disk!.free();
      const provisioned = await createSelfSignedCertificate({ commonName: 'provisioned' });
      await writeFile(join(config, 'shadow_peer.crt'), provisioned.certPem);
      await waitFor(() => /another certificate was provisioned/.test(state(loaded).message ?? ''), 'identity to notice the provisioned certificate');
      assert.equal(state(loaded).state, 'degraded');
      assert.equal(await readFile(join(config, 'shadow_peer.crt'), 'utf8'), provisioned.certPem);
      assert.equal(existsSync(join(config, 'shadow_peer.key')), false, 'its key is not written beside a stranger');
      assert.equal((await ask(loaded)).key_durable, false);
    } finally {
      await stop();
      disk!.free();
    }
  });

  it('reports a key on disk as durable, and no key as null', async () => {
    const fresh = await start(join(disk!.dir, 'c'));
    const none = await start(join(disk!.dir, 'd'), { IDENTITY_CERT_GENERATE: '0' });
    try {
      assert.equal(state(fresh.loaded).state, 'ok');
      const onDisk = await ask(fresh.loaded);
      assert.deepEqual([onDisk.key_durable, onDisk.key_durable_reason], [true, null]);
      const absent = await ask(none.loaded);
      assert.deepEqual([absent.cert_fingerprint, absent.key_durable, absent.key_durable_reason], [null, null, null]);
    } finally {
      await fresh.stop();
      await none.stop();
    }
  });
});
