import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { HUB_BUS_USER, OPERATOR_BUS_USER, busPassword, mosquittoAcl } from '../../core/src/auth/bus-acl.js';
import { deviceBusCredentials } from '../../core/src/auth/device-bus-credentials.js';
import { deviceToolToken } from '../../core/src/auth/tool-token.js';
import { loadFleetSecret } from '../../core/src/auth/fleet-secret.js';
import { fleetMeshKey } from '../../core/src/auth/fleet-keys.js';
import { mosquittoPasswordLine } from '../../core/src/auth/mosquitto-password.js';
import { LookoutError } from '../../core/src/errors/lookout-error.js';
import type { OperatorCommand } from './lookout-cli.js';

const HUB_DATA_DIR = { 'hub-data-dir': { type: 'string', default: '.lookout-dev/hub' } } as const;

/** The fleet secret: LOOKOUT_FLEET_SECRET, else the hub's data dir; never created here (the hub owns it). */
async function fleetSecret(hubDataDir: string): Promise<string> {
  return (await loadFleetSecret(resolve(hubDataDir), process.env.LOOKOUT_FLEET_SECRET || undefined, { create: false })).secret;
}

/** `lookout device-credentials <id>`: the environment a device started by hand needs (bus password, tool token, mesh key). */
export const deviceCredentialsCommand: OperatorCommand = {
  summary: "print a device's bus credentials, tool token and the fleet's mesh key (env lines), derived from the hub's fleet secret",
  usage:
    'lookout device-credentials <device-id> [--hub-data-dir <dir>] [--json]   e.g. env $(lookout device-credentials cam-1) lookout-edge --device-id cam-1 …',
  async run(args) {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { ...HUB_DATA_DIR, json: { type: 'boolean' } } });
    const id = positionals[0];
    if (!id) throw new LookoutError('config_invalid', 'device-credentials needs a device id', { details: { usage: true } });
    const secret = await fleetSecret(values['hub-data-dir']);
    const { username, password } = deviceBusCredentials(secret, id);
    const env = {
      LOOKOUT_MQTT_USERNAME: username,
      LOOKOUT_MQTT_PASSWORD: password,
      LOOKOUT_TOOL_TOKEN: deviceToolToken(secret, id),
      MESH_KEY: fleetMeshKey(secret),
    };
    console.log(
      values.json
        ? JSON.stringify(env)
        : Object.entries(env)
            .map(([k, v]) => `${k}=${v}`)
            .join('\n'),
    );
    return 0;
  },
};

/**
 * The broker settings the ACL needs: no anonymous clients, and the user name as client id, so that
 * a device connecting with another device's client id cannot end that device's session (mosquitto
 * would publish the other device's offline last will).
 */
function mosquittoConf(aclFile: string | undefined, passwordFile: string | undefined): string {
  return [
    'allow_anonymous false',
    'use_username_as_clientid true',
    ...(passwordFile ? [`password_file ${resolve(passwordFile)}`] : []),
    ...(aclFile ? [`acl_file ${resolve(aclFile)}`] : []),
    '',
  ].join('\n');
}

/** `lookout broker-acl`: the bus ACL as a mosquitto acl_file, and optionally its password_file. */
export const brokerAclCommand: OperatorCommand = {
  summary: 'write the bus ACL as a mosquitto acl_file (and a password_file for the hub, the operator and the given devices)',
  usage: 'lookout broker-acl [--out <acl_file>] [--password-file <file> --devices <id,id,…>] [--conf <mosquitto.conf snippet>] [--hub-data-dir <dir>]',
  async run(args) {
    const { values } = parseArgs({
      args,
      options: { ...HUB_DATA_DIR, out: { type: 'string' }, 'password-file': { type: 'string' }, devices: { type: 'string' }, conf: { type: 'string' } },
    });
    const acl = mosquittoAcl();
    if (values.out) await writeFile(values.out, acl, { mode: 0o644 });
    else process.stdout.write(acl);
    if (values['password-file']) {
      const secret = await fleetSecret(values['hub-data-dir']);
      const devices = (values.devices ?? '')
        .split(',')
        .map((d) => d.trim())
        .filter(Boolean);
      const lines = [HUB_BUS_USER, OPERATOR_BUS_USER].map((u) => mosquittoPasswordLine(u, busPassword(secret, u)));
      for (const id of devices) {
        const { username, password } = deviceBusCredentials(secret, id);
        lines.push(mosquittoPasswordLine(username, password));
      }
      await writeFile(values['password-file'], `${lines.join('\n')}\n`, { mode: 0o600 });
    }
    if (values.conf) await writeFile(values.conf, mosquittoConf(values.out, values['password-file']), { mode: 0o644 });
    return 0;
  },
};
