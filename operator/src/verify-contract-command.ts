import { randomBytes } from 'node:crypto';
import { MqttBus } from 'lookout/lib/mqtt';
import { LookoutError } from 'lookout/core';
import { formatReport, verifyContract } from './contract-verifier.js';
import { defineCommand } from './command-spec.js';
import { EXIT } from './exit-codes.js';

/** Each flag as the wire spells its fields (snake_case), and as the spec's verifier script and older lookouts did. */
const FLAG_ALIASES = { mqtt_host: 'mqtt-host', mqtt_port: 'mqtt-port', device_id: 'device-id', duration_s: 'duration-s' } as const;
type Flag = keyof typeof FLAG_ALIASES;

export const verifyContractCommand = defineCommand({
  summary: "sample a device's telemetry and dets, check them against the wire contracts and the 3-15 Hz rate",
  usage:
    'lookout verify-contract --mqtt-host H [--mqtt-port 1883] --device-id D [--duration-s 20] [--json] [--username U] (the spec’s flag names; --mqtt_host, --mqtt_port, --device_id, --duration_s are accepted too; password: env LOOKOUT_MQTT_PASSWORD)',
  synopsis: `lookout verify-contract --mqtt-host <host> --device-id <id> [--mqtt-port 1883] [--duration-s 20] [--username <user>] [--json]`,
  positionals: false,
  about: `The contract verifier (spec 01's verify_fleet_contract.py): samples a device's telemetry and dets on
the bus for --duration-s, validates them against the wire contracts and checks their rate is within
3-15 Hz; passes when at least 80% of the sampled messages are valid. The spec's flag spellings
(--mqtt_host, --mqtt_port, --device_id, --duration_s) are accepted too. The broker password comes
from LOOKOUT_MQTT_PASSWORD only (never a flag: --password is refused, as it would show in the process list).`,
  examples: [
    `lookout verify-contract --mqtt-host 10.0.0.2 --device-id cam-1 --duration-s 20`,
    `env $(lookout bus-credentials operator --reveal) lookout verify-contract --mqtt_host 10.0.0.2 --device_id cam-1 --json`,
  ],
  exits: [[EXIT.ok, 'the contract holds'], [EXIT.failed, 'it does not (the report says which fields and rates), or the broker cannot be reached'], EXIT.usage],
  options: {
    mqtt_host: { type: 'string' },
    'mqtt-host': { type: 'string' },
    mqtt_port: { type: 'string' },
    'mqtt-port': { type: 'string' },
    device_id: { type: 'string' },
    'device-id': { type: 'string' },
    duration_s: { type: 'string' },
    'duration-s': { type: 'string' },
    username: { type: 'string' },
    password: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
  async run({ values }) {
    const flag = (name: Flag): string | undefined => {
      const [snake, kebab] = [values[name], values[FLAG_ALIASES[name]]];
      if (snake !== undefined && kebab !== undefined && snake !== kebab) {
        throw new LookoutError('config_invalid', `--${name} and --${FLAG_ALIASES[name]} are the same flag and disagree`, {
          details: { usage: true, key: `--${name}` },
        });
      }
      return snake ?? kebab;
    };
    // Declared only to refuse it clearly: a secret in argv is readable by every local user (/proc).
    if (values.password !== undefined) {
      throw new LookoutError('config_invalid', '--password would show the secret in the process list; set LOOKOUT_MQTT_PASSWORD instead', {
        details: { usage: true, key: '--password' },
      });
    }
    const username = values.username ?? process.env.LOOKOUT_MQTT_USERNAME;
    const password = process.env.LOOKOUT_MQTT_PASSWORD;
    const host = flag('mqtt_host');
    const deviceId = flag('device_id');
    const durationS = Number(flag('duration_s') ?? '20');
    const port = Number(flag('mqtt_port') ?? '1883');
    if (!host || !deviceId) throw new Error('verify-contract needs --mqtt-host and --device-id');
    if (!Number.isFinite(durationS) || durationS <= 0 || durationS > 3600) throw new Error('--duration_s must be a number of seconds from 0 to 3600');
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('--mqtt_port must be a TCP port');
    const bus = await MqttBus.connect({
      url: `mqtt://${host}:${port}`,
      clientId: `lookout-verify-${randomBytes(4).toString('hex')}`,
      clean: true,
      connectTimeoutMs: 10_000,
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
    });
    try {
      const report = await verifyContract({ bus, deviceId, durationMs: durationS * 1000 });
      console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
      return report.passed ? 0 : 1;
    } finally {
      await bus.close();
    }
  },
});
