import { z } from 'zod';
import { ThermalStateSchema, busTopic } from 'lookout/core/contracts';
import { definePlugin, deviceInfo, recordingsRoot, toLookoutError } from 'lookout/core';
import { DieTemperatureToken } from '../../die-temp/src/service.js';
import { DeviceIdentityToken } from '../../identity/src/service.js';
import { DeviceHealthResultSchema, healthReport, hostFigures, SystemHealthResultSchema, withBus, type HealthInputs } from './health-report.js';

/** get_device_health: the thermal state follows the die at every layer, and is null with the reason while unknown. */
const DeviceHealthToolResultSchema = DeviceHealthResultSchema.extend({
  thermal_state: ThermalStateSchema.nullable(),
  thermal_state_reason: z.string().nullable(),
});

export const SystemHealthConfig = z
  .object({
    HEALTH_INTERVAL_MS: z.coerce.number().int().min(50).default(30_000),
    /** The recordings folder; default `/data/ext-recordings` when that mount exists, else `/data/recordings`, under the data root. */
    RECORDINGS_DIR: z.string().min(1).optional(),
    STORAGE_WARN_PCT: z.coerce.number().min(0).max(100).default(80),
    STORAGE_CRITICAL_PCT: z.coerce.number().min(0).max(100).default(95),
  })
  .superRefine((c, issues) => {
    if (c.STORAGE_WARN_PCT > c.STORAGE_CRITICAL_PCT) {
      issues.addIssue({ code: 'custom', path: ['STORAGE_WARN_PCT'], message: `must not exceed STORAGE_CRITICAL_PCT (${c.STORAGE_CRITICAL_PCT})` });
    }
  });

/**
 * Fleet health: storage of the recordings folder against thresholds, certificate presence, serial
 * and role. Owns `health` (on connect and about every 30 s) and the two health tools, which the hub
 * enriches with identity and peer-mesh fields.
 */
export default definePlugin({
  name: 'system-health',
  version: '1.0.0',
  core: '^1',
  description: 'health message and the get_system_health / get_device_health tools',
  layer: 'layer0',
  requires: [DeviceIdentityToken],
  optionalRequires: [DieTemperatureToken],
  config: SystemHealthConfig,
  topics: [busTopic('health')],
  tools: [
    {
      name: 'get_system_health',
      readOnly: true,
      idempotent: true,
      description:
        'Health of the device: status, storage_health (OK, WARNING, CRITICAL) of the recordings folder, storage summary, certificate presence, serial, role, uptime, memory and load',
      input: z.object({}),
      output: SystemHealthResultSchema,
    },
    {
      name: 'get_device_health',
      readOnly: true,
      idempotent: true,
      description: 'Health of the device runtime: every plugin with its state, die temperature, thermal state and storage health',
      input: z.object({}),
      output: DeviceHealthToolResultSchema,
    },
  ],
  async start(ctx) {
    const { runtime, config, log, clock } = ctx;
    const startedAt = clock.now();
    const settings = deviceInfo(runtime);
    const identity = ctx.services.get(DeviceIdentityToken);
    const recordingsDir = recordingsRoot(runtime.dataDir, config.RECORDINGS_DIR);
    const inputs = (): HealthInputs => ({
      deviceId: runtime.id,
      serial: identity.serial,
      role: identity.labels[0],
      fingerprintPresent: identity.fingerprint() !== null,
      recordingsDir,
      thresholds: { warnPct: config.STORAGE_WARN_PCT, criticalPct: config.STORAGE_CRITICAL_PCT },
      plugins: settings.plugins(),
    });

    const dieTempFigures = () => {
      const dieTemp = ctx.services.optional(DieTemperatureToken);
      return { die_temp_c: dieTemp ? dieTemp.current() : null, die_temp_reason: dieTemp ? dieTemp.reason() : 'no die-temp plugin is running' };
    };
    ctx.tools.register('get_system_health', async () => {
      const report = await healthReport(inputs());
      const bus = settings.bus();
      return { ...report, status: withBus(report.status as 'ok' | 'degraded' | 'critical', bus), bus, ...dieTempFigures(), ...hostFigures(startedAt) };
    });
    ctx.tools.register('get_device_health', async () => {
      const report = await healthReport(inputs());
      const dieTemp = ctx.services.optional(DieTemperatureToken);
      const thermal = dieTemp ? dieTemp.thermal() : { state: null, reason: 'no die-temp plugin is running' };
      return {
        timestamp: report.timestamp,
        device_id: runtime.id,
        status: withBus(report.status as 'ok' | 'degraded' | 'critical', settings.bus()),
        bus: settings.bus(),
        storage_health: report.storage_health,
        cert_fingerprint_present: report.cert_fingerprint_present,
        serial: report.serial,
        role: report.role,
        ...dieTempFigures(),
        thermal_state: thermal.state,
        thermal_state_reason: thermal.reason,
        plugins: settings.plugins(),
        disabled_plugins: settings.disabled(),
        uptime_s: Math.round((clock.now() - startedAt) / 1000),
      };
    });

    let busy = false;
    let lastStorage: string | undefined;
    const publish = async (): Promise<void> => {
      if (busy || !ctx.bus.connected) return;
      busy = true;
      try {
        const report = await healthReport(inputs());
        if (report.storage_health !== lastStorage) {
          const level = report.storage_health === 'OK' ? 'info' : 'warn';
          log[level]({ storage_health: report.storage_health, used_pct: report.storage.used_pct, path: recordingsDir }, 'storage health');
          lastStorage = report.storage_health;
          // The plugin list that status, hello and health carry says why the device cannot record.
          if (report.storage_health === 'CRITICAL') ctx.health.set('degraded', `storage CRITICAL: ${report.storage.used_pct}% of ${recordingsDir} used`);
          else ctx.health.set('ok');
        }
        await ctx.bus.publish('health', report);
      } catch (err) {
        const e = toLookoutError(err);
        log.warn({ code: e.code }, `health not published: ${e.message}`);
      } finally {
        busy = false;
      }
    };
    ctx.bus.onConnect(() => void publish());
    clock.setInterval(() => void publish(), config.HEALTH_INTERVAL_MS);
    log.info({ recordingsDir, intervalMs: config.HEALTH_INTERVAL_MS }, 'health reporting');
  },
});
