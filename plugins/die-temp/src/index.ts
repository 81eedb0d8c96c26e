import { z } from 'zod';
import { LookoutError, definePlugin, deviceInfo, toLookoutError, type RuntimeInfo } from 'lookout/core';
import { busTopic } from 'lookout/core/contracts';
import { SimScenarioToken } from '../../camera/src/service.js';
import { DieTemperatureToken, TelemetryChannelToken, type DieTemperature } from './service.js';
import { defaultSimTemperature, loadTempScript, temperatureAt } from './sim-script.js';
import { Telemetry } from './telemetry-channel.js';
import { ThermalClassifier } from './thermal-classifier.js';
import { thermalThresholdsFromEnv, type ThermalThresholds } from './thermal-thresholds.js';
import { readThermalZone } from './zone-reader.js';

export const DieTempConfig = z.object({
  DIE_TEMP_SOURCE: z.enum(['sim', 'zone']).optional().describe('default: sim with --source sim, else the thermal zone'),
  DIE_TEMP_ZONE: z.string().min(1).default('/sys/class/thermal/thermal_zone0/temp'),
  DIE_TEMP_INTERVAL_MS: z.coerce.number().int().min(10).default(1000),
  SIM_TEMP_SCRIPT: z.string().min(1).optional(),
  // Strings, read by thermalThresholdsFromEnv: a bad threshold leaves the state unknown, never the die unread.
  THERMAL_WARN_C: z.string().optional().describe('thermal state THERMAL_WARN from this die temperature, degrees Celsius (75)'),
  THERMAL_CRITICAL_C: z.string().optional().describe('thermal state THERMAL_CRITICAL from this die temperature, degrees Celsius (85)'),
  THERMAL_HYSTERESIS_C: z.string().optional().describe('degrees below a threshold the die must cool to before the state steps back down (5)'),
});

/**
 * The SoC die temperature, from a thermal zone file or simulated (a script of points, or a steady
 * ~48 °C), and its thermal state against the configured thresholds, at every layer. Others read
 * them through DieTemperatureToken: the status plugin publishes them, the thermal governor (layer 4)
 * acts on the state. It owns `telemetry` so that every layer publishes the die temperature: the
 * detector attaches to the channel and sends one message per frame.
 */
export default definePlugin({
  name: 'die-temp',
  version: '1.0.0',
  core: '^1',
  description: 'die temperature and thermal state from a thermal zone or the simulated source; owner of telemetry',
  layer: 'layer0',
  config: DieTempConfig,
  topics: [busTopic('telemetry')],
  provides: [DieTemperatureToken, TelemetryChannelToken],
  optionalRequires: [SimScenarioToken],
  async start(ctx) {
    const { config, clock, log } = ctx;
    let thresholds: ThermalThresholds | { invalid: string };
    try {
      thresholds = thermalThresholdsFromEnv(config);
    } catch (err) {
      thresholds = { invalid: toLookoutError(err).message };
      log.error(`thermal state unknown: ${thresholds.invalid}`);
    }
    const classifier = new ThermalClassifier(thresholds, (err) => log.error({ err: toLookoutError(err) }, 'thermal state listener failed'));
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
      classifier.feed(current);
    } catch (err) {
      const e = toLookoutError(err);
      reason = e.message;
      failing = true;
      ctx.health.set('degraded', `die temperature unknown: ${e.message}`);
      log.warn({ code: e.code }, `die temperature unknown: ${e.message}`);
    }
    if ('invalid' in thresholds) ctx.health.set('degraded', `thermal state unknown: ${thresholds.invalid}`);
    const telemetry = new Telemetry({
      bus: ctx.bus,
      cameraId: ctx.runtime.role ?? 'camera',
      celsius: () => current,
      thermal: () => classifier.reading(reason),
      idleReason: () => idleReason(ctx.runtime),
      log,
    });
    const listeners = new Set<(celsius: number) => void>();
    let busy = false;
    clock.setInterval(() => {
      if (busy) return;
      busy = true;
      read()
        .then((celsius) => {
          current = celsius;
          reason = null;
          classifier.feed(celsius);
          if (failing) {
            failing = false;
            if (!('invalid' in thresholds)) ctx.health.set('ok');
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
          telemetry.idle(clock.now());
        });
    }, config.DIE_TEMP_INTERVAL_MS);

    const service: DieTemperature = {
      current: () => current,
      reason: () => reason,
      onReading(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      thermal: () => classifier.reading(reason),
      onThermalChange: (listener) => classifier.onChange(listener),
    };
    ctx.services.provide(DieTemperatureToken, service);
    ctx.services.provide(TelemetryChannelToken, telemetry);
    log.info({ source: config.DIE_TEMP_SOURCE, celsius: current, thermal_state: service.thermal().state }, 'die temperature source ready');
    return {
      stop: () => {
        listeners.clear();
        classifier.clear();
      },
    };
  },
});

/** Why no detector feeds the telemetry: disabled at this layer, failed, or absent from the image. */
function idleReason(runtime: RuntimeInfo): string {
  const info = deviceInfo(runtime);
  const disabled = info.disabled().find((d) => d.name === 'detector');
  if (disabled) return `the detector is disabled at this layer (${disabled.reason})`;
  const report = info.plugins().find((p) => p.name === 'detector');
  if (report) return `the detector is ${report.state}${report.message ? `: ${report.message}` : ''}`;
  return `no detector is running at ${runtime.layer ?? 'this layer'}`;
}
