import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { MqttBus } from '../../core/src/bus/mqtt-bus.js';
import { LookoutError } from '../../core/src/errors/lookout-error.js';
import { formatReport, verifyContract } from './contract-verifier.js';
import type { OperatorCommand } from './lookout-cli.js';

export const verifyContractCommand: OperatorCommand = {
  summary: "sample a device's telemetry and dets, check them against the wire contracts and the 3-15 Hz rate",
  usage:
    'lookout verify-contract --mqtt-host H [--mqtt-port 1883] --device-id D [--duration-s 20] [--json] [--username U] (password: env LOOKOUT_MQTT_PASSWORD)',
  async run(args) {
    const { values } = parseArgs({
      args,
      options: {
        'mqtt-host': { type: 'string' },
        'mqtt-port': { type: 'string', default: '1883' },
        'device-id': { type: 'string' },
        'duration-s': { type: 'string', default: '20' },
        username: { type: 'string' },
        password: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    // Declared only to refuse it clearly: a secret in argv is readable by every local user (/proc).
    if (values.password !== undefined) {
      throw new LookoutError('config_invalid', '--password would show the secret in the process list; set LOOKOUT_MQTT_PASSWORD instead', {
        details: { usage: true, key: '--password' },
      });
    }
    const username = values.username ?? process.env.LOOKOUT_MQTT_USERNAME;
    const password = process.env.LOOKOUT_MQTT_PASSWORD;
    const host = values['mqtt-host'];
    const deviceId = values['device-id'];
    const durationS = Number(values['duration-s']);
    const port = Number(values['mqtt-port']);
    if (!host || !deviceId) throw new Error('verify-contract needs --mqtt-host and --device-id');
    if (!Number.isFinite(durationS) || durationS <= 0 || durationS > 3600) throw new Error('--duration-s must be a number of seconds from 0 to 3600');
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('--mqtt-port must be a TCP port');
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
};
