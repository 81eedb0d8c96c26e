import { z } from 'zod';
import { LastWillToken, definePlugin, deviceInfo, toLookoutError } from 'lookout/core';
import { busTopic } from 'lookout/core/contracts';
import { DieTemperatureToken } from '../../die-temp/src/service.js';
import { ThermalGovernorToken } from '../../thermal/src/service.js';
import { AutomationLogEventSchema } from 'lookout/core/contracts';
import { restartLogEntry } from './restart-log.js';
import { lastWillMessage, statusMessage } from './status-message.js';

export const StatusConfig = z.object({
  /** Republish period, so die_temp_c in the retained status stays fresh between thermal changes. */
  STATUS_INTERVAL_MS: z.coerce.number().int().min(50).default(60_000),
  /** How long a graceful stop waits for the offline status to reach the broker. */
  STATUS_OFFLINE_TIMEOUT_MS: z.coerce.number().int().min(10).default(2_000),
});

/**
 * Presence: owns the retained `status` (online/offline, thermal_state, die_temp_c). Online on every
 * connect, again on each thermal change and periodically; offline on a graceful stop, and through
 * the last-will it provides to the runtime when the device dies.
 */
export default definePlugin({
  name: 'status',
  version: '1.0.0',
  core: '^1',
  description: 'retained online/offline status with thermal state and die temperature',
  layer: 'layer0',
  requires: [DieTemperatureToken],
  optionalRequires: [ThermalGovernorToken],
  config: StatusConfig,
  provides: [LastWillToken],
  topics: [
    busTopic('status'),
    busTopic('events/automation_log', 'what the device did on its own: prunes, thermal suspensions, plugin restarts (the plugins report, this one publishes)'),
  ],
  async start(ctx) {
    const { runtime, config, log, clock } = ctx;
    const device = deviceInfo(runtime);
    const dieTemp = ctx.services.get(DieTemperatureToken);
    const governor = ctx.services.optional(ThermalGovernorToken);
    // The state follows the die at every layer (die-temp computes it); the governor only acts on it.
    const thermalState = () => dieTemp.thermal();
    // With the governor (layer 4) the status says whether neural work is suspended, since when and why.
    const suspension = (): Record<string, unknown> => (governor ? { detection_suspended: governor.suspension() } : {});

    // Set at the start of stop: an online status sent after the offline one would be the retained
    // last word of a stopped device.
    let stopping = false;
    const publish = async (reason: string): Promise<void> => {
      if (stopping || !ctx.bus.connected) return;
      try {
        await ctx.bus.publish(
          'status',
          statusMessage(runtime.id, 'online', thermalState(), dieTemp.current(), { reason, ...suspension(), plugins: device.plugins() }),
        );
      } catch (err) {
        const e = toLookoutError(err);
        log.warn({ code: e.code, reason }, `status not published: ${e.message}`);
      }
    };

    ctx.services.provide(LastWillToken, {
      suffix: 'status',
      qos: 1,
      retain: true,
      payload: () => lastWillMessage(runtime.id, new Date(clock.now())),
    });
    ctx.bus.onConnect(() => void publish('connect'));
    // With a governor, hear of a change once it acted on it: the status never runs ahead of the throttle.
    const onThermal = (state: string, celsius: number): void => {
      log.info({ thermal_state: state, celsius }, 'thermal state changed');
      void publish('thermal_change');
    };
    const offThermal = governor ? governor.onChange(onThermal) : dieTemp.onThermalChange(onThermal);
    // A plugin that fails or comes back changes what the device can do: the hub hears it at once.
    // ok ↔ degraded (a thermal state, a sensor hiccup) waits for the next status: its own owner reports it.
    const down = new Set(
      device
        .plugins()
        .filter((p) => p.state === 'failed' || p.state === 'skipped')
        .map((p) => p.name),
    );
    const offPlugins = device.onPluginChange((p) => {
      const isDown = p.state === 'failed' || p.state === 'skipped';
      if (isDown === down.has(p.name) || p.name === ctx.name) return;
      if (isDown) down.add(p.name);
      else down.delete(p.name);
      void publish('plugin_change');
    });
    // The runtime restarts plugins (restart_plugin); the status plugin tells the fleet, as it owns presence.
    // What plugins did on their own (a prune, a thermal suspension), and the runtime's restarts, go
    // out on events/automation_log, which this plugin owns (a topic has one owner).
    const offAutomation = device.onAutomation((entry, at) => {
      const message = AutomationLogEventSchema.parse({ timestamp: at.toISOString(), type: 'automation_log', ...entry });
      ctx.bus.publish('events/automation_log', message).catch((err: unknown) => {
        log.warn({ code: toLookoutError(err).code, action: entry.action }, 'automation_log not published');
      });
    });
    const offRestarts = device.onPluginRestart((r) => device.reportAutomation(restartLogEntry(r)));
    const periodic = clock.setInterval(() => void publish('periodic'), config.STATUS_INTERVAL_MS);

    return {
      async stop() {
        stopping = true;
        clock.clear(periodic);
        offThermal();
        offPlugins();
        offRestarts();
        offAutomation();
        if (!ctx.bus.connected) return;
        const offline = ctx.bus.publish(
          'status',
          statusMessage(runtime.id, 'offline', thermalState(), dieTemp.current(), { reason: 'shutdown', ...suspension() }),
        );
        offline.catch(() => undefined); // after a timeout, a late rejection (bus closed) is expected
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), config.STATUS_OFFLINE_TIMEOUT_MS)));
        try {
          if ((await Promise.race([offline, timeout])) === 'timeout') log.warn('offline status not acknowledged in time');
        } catch (err) {
          log.warn({ code: toLookoutError(err).code }, 'offline status not published');
        } finally {
          clearTimeout(timer);
        }
      },
    };
  },
});
