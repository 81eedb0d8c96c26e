import type { DeviceOptions } from './device-runtime.js';
import { usageError } from './edge-args.js';

/** Environment keys of the device's bus (described in the usage text): its reconnect cap and the outbox's bounds. */
type BusEnvKey = 'LOOKOUT_BUS_RECONNECT_MAX_MS' | 'LOOKOUT_OUTBOX_MAX_MESSAGES' | 'LOOKOUT_OUTBOX_MAX_BYTES' | 'LOOKOUT_OUTBOX_FLUSH_MS';

/** The bus settings of `lookout-edge` from its environment; a value that is not a positive integer is a usage error naming it. */
export function busSettingsFromEnv(env: Record<string, string | undefined>): Pick<DeviceOptions, 'mqttOptions' | 'outbox'> {
  const int = (key: BusEnvKey): number | undefined => {
    const value = env[key];
    if (value === undefined || value === '') return undefined;
    if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) throw usageError(`${key}=${value} is not a positive integer`);
    return Number(value);
  };
  const reconnectMax = int('LOOKOUT_BUS_RECONNECT_MAX_MS');
  const maxMessages = int('LOOKOUT_OUTBOX_MAX_MESSAGES');
  const maxBytes = int('LOOKOUT_OUTBOX_MAX_BYTES');
  const flushMs = int('LOOKOUT_OUTBOX_FLUSH_MS');
  return {
    ...(reconnectMax !== undefined ? { mqttOptions: { reconnect: { initialMs: Math.min(250, reconnectMax), maxMs: reconnectMax } } } : {}),
    outbox: {
      ...(maxMessages !== undefined ? { maxMessages } : {}),
      ...(maxBytes !== undefined ? { maxBytes } : {}),
      ...(flushMs !== undefined ? { flushMs } : {}),
    },
  };
}
