import { randomBytes } from 'node:crypto';
import { MqttBus } from 'lookout/lib/mqtt';
import { HelloMessageSchema, type HelloMessage } from 'lookout/core/contracts';
import { LookoutError } from 'lookout/core';

/** parseArgs options of the commands that wait for a device's hello. */
export const BUS_OPTIONS = {
  mqtt: { type: 'string' },
  'mqtt-username': { type: 'string' },
  'wait-s': { type: 'string', default: '60' },
} as const;

export const BUS_OPTIONS_HELP = `Bus (to see the device come back):
  --mqtt <url>               the fleet's broker, e.g. mqtt://10.0.0.2:1883 (default $LOOKOUT_MQTT_URL)
  --mqtt-username <name>     broker user (default $LOOKOUT_MQTT_USERNAME; password from $LOOKOUT_MQTT_PASSWORD only)
  --wait-s <s>               how long to wait for the device's hello (default 60)`;

export interface BusValues {
  mqtt?: string;
  'mqtt-username'?: string;
  'wait-s': string;
}

/** A subscription to one device's hello, opened before the restart so the new hello cannot be missed. */
export interface HelloWatch {
  /** Resolves with the first hello received after `sinceMs` (this machine's clock) that satisfies `accept`; device_not_back after `waitMs`. */
  next(sinceMs: number, accept: (hello: HelloMessage) => boolean, waitMs: number, expected: string): Promise<HelloMessage>;
  close(): Promise<void>;
}

export function waitSeconds(values: BusValues): number {
  const s = Number(values['wait-s']);
  if (!Number.isFinite(s) || s <= 0 || s > 3600)
    throw new LookoutError('config_invalid', `--wait-s: seconds from 1 to 3600, not "${values['wait-s']}"`, { details: { usage: true } });
  return s;
}

export async function watchHello(deviceId: string, values: BusValues): Promise<HelloWatch> {
  const url = values.mqtt ?? process.env.LOOKOUT_MQTT_URL;
  if (!url)
    throw new LookoutError('config_invalid', 'seeing the device come back needs the broker: --mqtt <url> (or LOOKOUT_MQTT_URL)', { details: { usage: true } });
  const username = values['mqtt-username'] ?? process.env.LOOKOUT_MQTT_USERNAME;
  const password = process.env.LOOKOUT_MQTT_PASSWORD;
  const bus = await MqttBus.connect({
    url,
    clientId: `lookout-op-${randomBytes(4).toString('hex')}`,
    clean: true,
    connectTimeoutMs: 10_000,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  });
  // Dated by receipt here, not by the device's clock (a device's clock may be off); retained ones are the broker's memory.
  const hellos: { hello: HelloMessage; receivedAt: number }[] = [];
  const waiters = new Set<() => void>();
  await bus.subscribe(`devices/${deviceId}/hello`, (_topic, payload, meta) => {
    if (meta.retain) return;
    try {
      const parsed = HelloMessageSchema.safeParse(JSON.parse(payload.toString('utf8')));
      if (!parsed.success) return;
      hellos.push({ hello: parsed.data, receivedAt: Date.now() });
      for (const w of waiters) w();
    } catch {
      // Not JSON: not a hello this command can use.
    }
  });
  return {
    next(sinceMs, accept, waitMs, expected) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = hellos.find((h) => h.receivedAt >= sinceMs && accept(h.hello));
          if (!found) return false;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found.hello);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const last = hellos.at(-1)?.hello;
          reject(
            new LookoutError(
              'device_not_back',
              `${deviceId} sent no hello with ${expected} within ${Math.round(waitMs / 1000)} s${last ? ` (its last hello: layer ${last.layer}, runtime ${last.versions.runtime}, at ${last.timestamp})` : ' (no hello at all)'}`,
              { details: { device_id: deviceId, expected, wait_ms: waitMs } },
            ),
          );
        }, waitMs);
        if (!check()) waiters.add(check);
      });
    },
    close: () => bus.close(),
  };
}
