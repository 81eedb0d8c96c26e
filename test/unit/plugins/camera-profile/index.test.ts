import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import { definePlugin } from '../../../../core/src/plugin/context.js';
import cameraProfile from '../../../../plugins/camera-profile/src/index.js';
import { CameraProfileToken } from '../../../../plugins/camera-profile/src/service.js';
import { DEFAULT_CAMERA_PROFILE } from '../../../../plugins/camera-profile/src/profile-schema.js';
import { mergeProfile, readProfileFile } from '../../../../plugins/camera-profile/src/profile-store.js';

const logger = createLogger({ level: 'silent' });

describe('camera profile', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-profile-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('merges a valid update and names the changed fields', () => {
    const { profile, changed } = mergeProfile(DEFAULT_CAMERA_PROFILE, { fps: 30, gop: 30, resolution: '1280x720' });
    assert.deepEqual(changed.sort(), ['fps', 'resolution']);
    assert.equal(profile.codec, 'H265');
  });

  it('refuses invalid values with tool_arguments_invalid', () => {
    for (const bad of [{ fps: 61 }, { resolution: '100x100' }, { bitrate_kbps: 1.5 }, { codec: 'VP9' }] as object[]) {
      assert.throws(() => mergeProfile(DEFAULT_CAMERA_PROFILE, bad), { code: 'tool_arguments_invalid' });
    }
  });

  it('reads a missing file as none and refuses a broken one naming it', async () => {
    assert.equal(await readProfileFile(join(dir, 'none.json')), undefined);
    await writeFile(join(dir, 'broken.json'), '{"profile": {"fps": 10}}');
    await assert.rejects(readProfileFile(join(dir, 'broken.json')), /broken\.json is invalid/);
  });

  it('a listener that throws neither fails the persisted update nor keeps the others from hearing it', async () => {
    const heard: number[] = [];
    const consumer = definePlugin({
      name: 'profile-consumer',
      version: '1.0.0',
      core: '^1',
      requires: [CameraProfileToken],
      start(ctx) {
        const profiles = ctx.services.get(CameraProfileToken);
        profiles.onChange(() => {
          throw new Error('encoder restart failed');
        });
        profiles.onChange((p) => void heard.push(p.fps));
      },
    });
    const runtime = { kind: 'device' as const, id: 'cam-l', dataDir: join(dir, 'listeners'), layer: 'layer0' as const };
    const bus = new MemoryBus();
    const loaded = await loadPlugins({ plugins: [cameraProfile, consumer], runtime, bus, logger, env: {} });
    try {
      const result = (await loaded.tools.call('set_camera_profile', { fps: 12 })) as { profile: { fps: number }; changed: string[] };
      assert.equal(result.profile.fps, 12);
      assert.deepEqual(result.changed, ['fps']);
      assert.deepEqual(heard, [12]);
    } finally {
      await loaded.stop();
      await bus.close();
    }
  });

  it('serializes concurrent updates, persists each, and starts degraded on a corrupt file', async () => {
    const runtime = { kind: 'device' as const, id: 'cam-p', dataDir: dir, layer: 'layer0' as const };
    const bus = new MemoryBus();
    const loaded = await loadPlugins({ plugins: [cameraProfile], runtime, bus, logger, env: {} });
    try {
      const results = await Promise.allSettled([
        loaded.tools.call('set_camera_profile', { fps: 5 }),
        loaded.tools.call('set_camera_profile', { bitrate_kbps: 800 }),
        loaded.tools.call('set_camera_profile', { gop: 9999 }),
        loaded.tools.call('set_camera_profile', { codec: 'H264' }),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
      );
      const path = join(dir, 'data', 'config', 'camera_profile.json');
      const file = JSON.parse(await readFile(path, 'utf8')) as { profile: Record<string, unknown> };
      assert.deepEqual(file.profile, { ...DEFAULT_CAMERA_PROFILE, fps: 5, bitrate_kbps: 800, codec: 'H264' });
    } finally {
      await loaded.stop();
    }
    await mkdir(join(dir, 'data', 'config'), { recursive: true });
    await writeFile(join(dir, 'data', 'config', 'camera_profile.json'), 'garbage');
    const again = await loadPlugins({ plugins: [cameraProfile], runtime, bus, logger, env: {} });
    try {
      assert.equal(again.plugins[0].state, 'degraded');
      const got = (await again.tools.call('get_camera_profile', {})) as { profile: unknown };
      assert.deepEqual(got.profile, DEFAULT_CAMERA_PROFILE);
      assert.equal(await readFile(join(dir, 'data', 'config', 'camera_profile.json'), 'utf8'), 'garbage');
    } finally {
      await again.stop();
      await bus.close();
    }
  });
});
