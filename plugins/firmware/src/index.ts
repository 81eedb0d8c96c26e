import { z } from 'zod';
import { PluginReportSchema } from 'lookout/core/contracts';
import { definePlugin, devicePath, deviceInfo } from 'lookout/core';
import { checkForUpdate, UPDATE_MANIFEST_PATH, UpdateCheckResultSchema } from './update-check.js';

export const FirmwareConfig = z.object({
  /** The update manifest; default `<data root>/data/config/firmware_update.json`. */
  FIRMWARE_UPDATE_MANIFEST: z.string().min(1).optional(),
});

const FirmwareStatusSchema = z.object({
  runtime_version: z.string(),
  core_version: z.string(),
  node_version: z.string(),
  image: z.string(),
  layer: z.string(),
  plugins: z.array(PluginReportSchema),
  disabled_plugins: z.array(z.object({ name: z.string(), reason: z.string() })),
});

/** What runs on the device: runtime, core and plugin versions and states, layer and image. */
export default definePlugin({
  name: 'firmware',
  version: '1.0.0',
  core: '^1',
  description: 'runtime and plugin versions; update check',
  layer: 'layer0',
  config: FirmwareConfig,
  tools: [
    {
      name: 'get_firmware_status',
      readOnly: true,
      idempotent: true,
      description: 'Runtime, core, Node and plugin versions with each plugin state, the active layer and the device image',
      input: z.object({}),
      output: FirmwareStatusSchema,
    },
    {
      name: 'check_firmware_update',
      readOnly: true,
      idempotent: true,
      description: 'Compares the running version with the update manifest on the device, if any',
      input: z.object({}),
      output: UpdateCheckResultSchema,
    },
  ],
  start(ctx) {
    const { runtime, config } = ctx;
    const settings = deviceInfo(runtime);
    const manifest = config.FIRMWARE_UPDATE_MANIFEST ?? devicePath(runtime.dataDir, UPDATE_MANIFEST_PATH);
    ctx.tools.register('get_firmware_status', () => ({
      runtime_version: settings.runtimeVersion,
      core_version: settings.coreVersion,
      node_version: process.versions.node,
      image: runtime.image ?? 'unknown',
      layer: runtime.layer ?? 'unknown',
      plugins: settings.plugins(),
      disabled_plugins: settings.disabled(),
    }));
    ctx.tools.register('check_firmware_update', () => checkForUpdate(settings.runtimeVersion, manifest));
  },
});
