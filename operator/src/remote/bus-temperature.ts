import { randomBytes } from 'node:crypto';
import { MqttBus } from 'lookout/lib/mqtt';
import { LookoutError } from 'lookout/core';

/**
 * The die temperature as the device reports it on the bus (telemetry's die_temp, status's
 * die_temp_c): for devices whose thermal zone is not a file the gate can read (a simulated die, a
 * zone elsewhere), "tools or status" in the spec's words.
 */
export class BusTemperature {
  private latest: { celsius: number; at: number } | undefined;

  private constructor(
    private readonly bus: MqttBus,
    private readonly deviceId: string,
  ) {}

  static async open(deviceId: string, url: string): Promise<BusTemperature> {
    const username = process.env.LOOKOUT_MQTT_USERNAME;
    const password = process.env.LOOKOUT_MQTT_PASSWORD;
    const bus = await MqttBus.connect({
      url,
      clientId: `lookout-temp-${randomBytes(4).toString('hex')}`,
      clean: true,
      connectTimeoutMs: 10_000,
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
    });
    const reader = new BusTemperature(bus, deviceId);
    for (const suffix of ['telemetry', 'status']) {
      await bus.subscribe(`devices/${deviceId}/${suffix}`, (_topic, payload) => {
        try {
          const m = JSON.parse(payload.toString('utf8')) as { die_temp?: unknown; die_temp_c?: unknown };
          const celsius = typeof m.die_temp === 'number' ? m.die_temp : m.die_temp_c;
          if (typeof celsius === 'number' && Number.isFinite(celsius)) reader.latest = { celsius, at: Date.now() };
        } catch {
          // not JSON: no temperature in it
        }
      });
    }
    return reader;
  }

  /** The newest reading, refused when none came within `maxAgeMs`. */
  read(maxAgeMs: number): number {
    if (!this.latest || Date.now() - this.latest.at > maxAgeMs) {
      throw new LookoutError('soak_gate_failed', `${this.deviceId} reported no die temperature on the bus for ${Math.round(maxAgeMs / 1000)} s`, {
        details: { device_id: this.deviceId },
      });
    }
    return this.latest.celsius;
  }

  close(): Promise<void> {
    return this.bus.close();
  }
}
