import { z } from 'zod';
import { LookoutError, definePlugin, deviceInfo, toLookoutError } from 'lookout/core';
import { SimScenarioToken } from '../../camera/src/service.js';
import { DieTemperatureToken, type DieTemperature } from './service.js';
import { defaultSimTemperature, loadTempScript, temperatureAt } from './sim-script.js';
import { readThermalZone } from './zone-reader.js';

export const DieTempConfig = z.object({
  DIE_TEMP_SOURCE: z.enum(['sim', 'zone']).optional().describe('default: sim with --source sim, else the thermal zone'),
  DIE_TEMP_ZONE: z.string().min(1).default('/sys/class/thermal/thermal_zone0/temp'),
  DIE_TEMP_INTERVAL_MS: z.coerce.number().int().min(10).default(1000),
  SIM_TEMP_SCRIPT: z.string().min(1).optional(),
});

/**
 * The SoC die temperature, from a thermal zone file or simulated (a script of points, or a steady
 * ~48 °C). Others read it through DieTemperatureToken: the status plugin publishes it, the thermal
 * governor acts on it.
 */
export default definePlugin({
  name: 'die-temp',
  version: '1.0.0',
  core: '^1',
  description: 'die temperature from a thermal zone or the simulated source',
  layer: 'layer0',
  config: DieTempConfig,
  provides: [DieTemperatureToken],
  optionalRequires: [SimScenarioToken],
  async start(ctx) {
    const { config, clock, log } = ctx;
    const startedAt = clock.now();
    let read: () => Promise<number>;
    // A real device reads its real sensor: a simulated temperature there would blind the governor.
    const source = config.DIE_TEMP_SOURCE ?? (deviceInfo(ctx.runtime).source === 'sim' ? 'sim' : 'zone');
    if (source === 'zone') {
      const path = config.DIE_TEMP_ZONE;
      read = () =>
        readThermalZone(path).catch((err: unknown) => {
          if (config.DIE_TEMP_SOURCE) throw err;
          const e = toLookoutError(err);
          throw new LookoutError(e.code, `${e.message} (the thermal zone is read unless the device runs with --source sim or DIE_TEMP_SOURCE=sim)`, {
            cause: err,
            details: e.details,
          });
        });
    } else if (config.SIM_TEMP_SCRIPT) {
      const script = await loadTempScript(config.SIM_TEMP_SCRIPT);
      read = async () => temperatureAt(script, (clock.now() - startedAt) / 1000);
    } else {
      // The simulated scene may carry its own temperature script (e.g. thermal-soak): the die follows it.
      const scene = ctx.services.optional(SimScenarioToken);
      read = async () => scene?.temperatureAt() ?? defaultSimTemperature((clock.now() - startedAt) / 1000);
    }

    // A sensor that cannot be read leaves the temperature unknown (null, with the reason), never the
    // device down: the plugin keeps trying and reports the first good reading.
    let current: number | null = null;
    let reason: string | null = null;
    let failing = false;
    try {
      current = await read();
    } catch (err) {
      const e = toLookoutError(err);
      reason = e.message;
      failing = true;
      ctx.health.set('degraded', `die temperature unknown: ${e.message}`);
      log.warn({ code: e.code }, `die temperature unknown: ${e.message}`);
    }
    const listeners = new Set<(celsius: number) => void>();
    let busy = false;
    clock.setInterval(() => {
      if (busy) return;
      busy = true;
      read()
        .then((celsius) => {
          current = celsius;
          reason = null;
          if (failing) {
            failing = false;
            ctx.health.set('ok');
            log.info({ celsius }, 'die temperature readable again');
          }
          for (const l of [...listeners]) {
            try {
              l(celsius);
            } catch (err) {
              log.error({ err: toLookoutError(err) }, 'die temperature listener failed');
            }
          }
        })
        .catch((err: unknown) => {
          // The last good reading stays; a sensor that vanishes is reported once, not every second.
          if (!failing) log.warn({ code: toLookoutError(err).code }, toLookoutError(err).message);
          failing = true;
          reason = toLookoutError(err).message;
          ctx.health.set('degraded', toLookoutError(err).message);
        })
        .finally(() => {
          busy = false;
        });
    }, config.DIE_TEMP_INTERVAL_MS);

    const service: DieTemperature = {
      current: () => current,
      reason: () => reason,
      onReading(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    ctx.services.provide(DieTemperatureToken, service);
    log.info({ source: config.DIE_TEMP_SOURCE, celsius: current }, 'die temperature source ready');
    return { stop: () => listeners.clear() };
  },
});
