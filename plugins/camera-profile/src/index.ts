import { z } from 'zod';
import { definePlugin, devicePath, toLookoutError } from 'lookout/core';
import { CameraProfileUpdateSchema, DEFAULT_CAMERA_PROFILE, ProfileResultSchema, type CameraProfile } from './profile-schema.js';
import { mergeProfile, readProfileFile, writeProfileFile } from './profile-store.js';
import { CameraProfileToken, type CameraProfileService } from './service.js';

/** Default place of the profile file, beside the device's other configuration. */
export const CAMERA_PROFILE_PATH = '/data/config/camera_profile.json';

export const CameraProfileConfig = z.object({
  CAMERA_PROFILE_PATH: z.string().min(1).optional(),
});

/** The camera's encoder profile: read, validated updates, persisted atomically in a profile file. */
export default definePlugin({
  name: 'camera-profile',
  version: '1.0.0',
  core: '^1',
  description: 'camera encoder profile (get_camera_profile, set_camera_profile)',
  layer: 'layer0',
  config: CameraProfileConfig,
  provides: [CameraProfileToken],
  tools: [
    {
      name: 'get_camera_profile',
      readOnly: true,
      idempotent: true,
      description: 'The camera encoder profile: codec, resolution, fps, bitrate_kbps, gop, rate_control',
      input: z.object({}),
      output: ProfileResultSchema,
    },
    {
      name: 'set_camera_profile',
      description:
        'Changes any of codec (H265, H264), resolution (WIDTHxHEIGHT), fps, bitrate_kbps, gop, rate_control; the merged profile is validated and persisted',
      input: CameraProfileUpdateSchema,
      output: ProfileResultSchema,
    },
  ],
  async start(ctx) {
    const { runtime, config, log } = ctx;
    const path = config.CAMERA_PROFILE_PATH ?? devicePath(runtime.dataDir, CAMERA_PROFILE_PATH);
    let profile: CameraProfile = DEFAULT_CAMERA_PROFILE;
    let updatedAt: string | null = null;
    try {
      const file = await readProfileFile(path);
      if (file) ({ profile, updated_at: updatedAt } = file);
    } catch (err) {
      // A bad file must not keep the camera from starting: defaults run, the file stays for inspection.
      const e = toLookoutError(err);
      log.error({ code: e.code, path }, `${e.message}; using the default profile`);
      ctx.health.set('degraded', e.message);
    }
    const listeners = new Set<(p: CameraProfile) => void>();
    let queue: Promise<unknown> = Promise.resolve();

    const service: CameraProfileService = {
      get: () => profile,
      set(update) {
        // One write at a time: each update merges into the result of the one before.
        const run = queue.then(async () => {
          const merged = mergeProfile(profile, update);
          const file = await writeProfileFile(path, merged.profile);
          profile = file.profile;
          updatedAt = file.updated_at;
          ctx.health.set('ok');
          log.info({ changed: merged.changed }, 'camera profile set');
          // The profile is already persisted: a listener's failure is its own, not the update's.
          for (const l of [...listeners]) {
            try {
              l(profile);
            } catch (err) {
              log.error({ code: toLookoutError(err).code }, `camera profile listener failed: ${toLookoutError(err).message}`);
            }
          }
          return merged;
        });
        queue = run.catch(() => undefined);
        return run;
      },
      onChange(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    ctx.services.provide(CameraProfileToken, service);
    ctx.tools.register('get_camera_profile', () => ({ profile, updated_at: updatedAt, path }));
    ctx.tools.register('set_camera_profile', async (update: Partial<CameraProfile>) => {
      const { changed } = await service.set(update);
      return { profile, updated_at: updatedAt, path, changed };
    });
  },
});
