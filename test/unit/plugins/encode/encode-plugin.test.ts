import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import cameraPlugin from '../../../../plugins/camera/src/index.js';
import encodePlugin from '../../../../plugins/encode/src/index.js';
import { EncodedVideoToken } from '../../../../plugins/encode/src/service.js';
import { waitFor } from '../../../support/wait-for.js';

async function run(env: Record<string, string>, oneShot = false) {
  const dataDir = await mkdtemp(join(tmpdir(), 'lookout-encode-'));
  const runtime = await loadPlugins({
    plugins: [cameraPlugin, encodePlugin],
    runtime: { kind: 'device', id: 'cam-enc', dataDir, layer: 'layer0', device: { source: 'sim', oneShot } },
    bus: new MemoryBus(),
    env: { ENCODE_RESOLUTION: '160x120', ENCODE_FPS: '2', ENCODE_GOP: '2', LIVE_PORT: '0', ...env },
    logger: createLogger({ level: 'silent' }),
  });
  return {
    runtime,
    state: () => runtime.plugins.find((p) => p.name === 'encode')!,
    async stop() {
      await runtime.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

test('LIVE_HOST beyond loopback without a token: the stream stays on loopback and the plugin says why; the encoder runs', async () => {
  const d = await run({ LIVE_HOST: '0.0.0.0' });
  try {
    const state = d.state();
    assert.equal(state.state, 'degraded');
    assert.match(state.message ?? '', /LIVE_HOST 0\.0\.0\.0 needs LOOKOUT_TOOL_TOKEN/);
    assert.ok(d.runtime.ports.live > 0, 'the live port is announced');
    const video = d.runtime.service(EncodedVideoToken)!;
    await waitFor(() => video.latestGop().length > 0, 'pictures', 10_000);
    assert.equal(d.state().state, 'degraded', 'still degraded once the encoder produces');
  } finally {
    await d.stop();
  }
});

test('with a token the stream may listen beyond loopback (plain HTTP asked for: over TLS see live-tls.test.ts)', async () => {
  const d = await run({ LIVE_HOST: '0.0.0.0', LOOKOUT_TOOL_TOKEN: 'tool-token-0123456789abcdef', LIVE_TLS: 'off' });
  try {
    assert.equal(d.state().state, 'ok');
  } finally {
    await d.stop();
  }
});

test('one-shot modes start no encoder and no server; get_live_jpeg says the encoder is not running', async () => {
  const d = await run({}, true);
  try {
    assert.equal(d.runtime.service(EncodedVideoToken)!.running, false);
    assert.equal(d.runtime.ports.live, undefined);
    await assert.rejects(d.runtime.tools.call('get_live_jpeg', {}), (e: { code?: string }) => e.code === 'encoder_unavailable');
  } finally {
    await d.stop();
  }
});
