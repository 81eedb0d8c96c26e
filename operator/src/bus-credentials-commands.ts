import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  HUB_BUS_USER,
  OPERATOR_BUS_USER,
  busPassword,
  mosquittoAcl,
  deviceBusCredentials,
  deviceToolToken,
  loadFleetSecret,
  fleetMeshKey,
  mosquittoPasswordLine,
} from 'lookout/lib/auth';
import { LookoutError } from 'lookout/core';
import { BASE_EXITS, defineCommand } from './command-spec.js';
import { mosquittoConf, type MosquittoConfOptions } from './mosquitto-conf.js';

const HUB_DATA_DIR = { 'hub-data-dir': { type: 'string', default: '.lookout-dev/hub' } } as const;

/** The fleet secret: LOOKOUT_FLEET_SECRET, else the hub's data dir; never created here (the hub owns it). */
async function fleetSecret(hubDataDir: string): Promise<string> {
  return (await loadFleetSecret(resolve(hubDataDir), process.env.LOOKOUT_FLEET_SECRET || undefined, { create: false })).secret;
}

/** `lookout device-credentials <id>`: the environment a device started by hand needs (bus password, tool token, mesh key). */
export const deviceCredentialsCommand = defineCommand({
  summary: "print a device's bus credentials, tool token and the fleet's mesh key (env lines), derived from the hub's fleet secret",
  usage:
    'lookout device-credentials <device-id> [--hub-data-dir <dir>] [--json]   e.g. env $(lookout device-credentials cam-1) lookout-edge --device-id cam-1 …',
  synopsis: `lookout device-credentials <device-id> [--hub-data-dir <dir>] [--json]`,
  about: `Prints the environment a device started by hand needs, derived from the hub's fleet secret
(LOOKOUT_FLEET_SECRET, else <hub-data-dir>/fleet-secret; never created here): its bus user and
password, its tool token and the fleet's mesh key, as env lines (or JSON).

Options:
  --hub-data-dir <dir>   the hub's data folder (default .lookout-dev/hub)
  --json                 one JSON object`,
  examples: [
    `env $(lookout device-credentials cam-1) lookout-edge --device-id cam-1 --mqtt mqtt://10.0.0.2:1883`,
    `lookout device-credentials cam-2 --hub-data-dir /var/lib/lookout-hub --json`,
  ],
  exits: BASE_EXITS,
  options: { ...HUB_DATA_DIR, json: { type: 'boolean' } },
  async run({ values, positionals }) {
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
});

/** The bus user a `bus-credentials` argument names: `hub` and `operator` as short forms of their user names. */
function busUserOf(name: string): { username: string; clientIds: string } {
  if (name === 'hub' || name === HUB_BUS_USER) return { username: HUB_BUS_USER, clientIds: `its own (${HUB_BUS_USER}-…, derived from the fleet secret)` };
  if (name === 'operator' || name === OPERATOR_BUS_USER) {
    return { username: OPERATOR_BUS_USER, clientIds: `one per tool, under ${OPERATOR_BUS_USER}- or lookout-tap-` };
  }
  return { username: name, clientIds: `${name} (a device's client id is its id)` };
}

/**
 * `lookout bus-credentials <user>`: the bus user and password of the hub, the operator or a device.
 * The password is printed only with --reveal, to stdout (never to a log), so that a plain call
 * shows who connects how without putting a secret on the screen or in a terminal's scrollback.
 */
export const busCredentialsCommand = defineCommand({
  summary: 'print the bus user of the hub, the operator or a device (its password only with --reveal), derived from the fleet secret',
  usage: 'lookout bus-credentials <hub|operator|device-id> [--reveal] [--url <mqtt-url>] [--json] [--hub-data-dir <dir>]',
  about: `Prints a bus user derived from the hub's fleet secret (LOOKOUT_FLEET_SECRET, else
<hub-data-dir>/fleet-secret; never created here): the hub (lookout-hub), the operator and its tools
(lookout-operator), or a device (its id). The password is printed only with --reveal; without it
stderr says which client ids the user connects with.

Options:
  --reveal               print the password (LOOKOUT_MQTT_PASSWORD=…, or inside --url)
  --url <mqtt-url>       print this broker URL with the user (and with --reveal the password) in it
  --json                 one JSON object {username, client_ids, password?, url?}
  --hub-data-dir <dir>   the hub's data folder (default .lookout-dev/hub)`,
  examples: [
    `export LOOKOUT_HUB_MQTT=$(lookout bus-credentials hub --reveal --url mqtt://broker.lan:1884)`,
    `env $(lookout bus-credentials operator --reveal) lookout tap all --mqtt mqtt://broker.lan:1884`,
    `lookout bus-credentials cam-1`,
  ],
  exits: BASE_EXITS,
  options: { ...HUB_DATA_DIR, reveal: { type: 'boolean' }, url: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }) {
    const name = positionals[0];
    if (!name || positionals.length > 1) {
      throw new LookoutError('config_invalid', 'bus-credentials takes one user: hub, operator or a device id', { details: { usage: true } });
    }
    const { username, clientIds } = busUserOf(name);
    const secret = await fleetSecret(values['hub-data-dir']);
    // deviceBusCredentials refuses the reserved ids and what is no device id, with its typed error.
    const password =
      username === HUB_BUS_USER || username === OPERATOR_BUS_USER ? busPassword(secret, username) : deviceBusCredentials(secret, username).password;
    const reveal = values.reveal === true;
    let url: string | undefined;
    if (values.url !== undefined) {
      let parsed: URL;
      try {
        parsed = new URL(values.url);
      } catch {
        throw new LookoutError('config_invalid', `--url: an mqtt:// or mqtts:// URL, not "${values.url}"`, { details: { usage: true } });
      }
      if (!/^mqtts?:$/.test(parsed.protocol))
        throw new LookoutError('config_invalid', `--url: an mqtt:// or mqtts:// URL, not "${values.url}"`, { details: { usage: true } });
      parsed.username = username;
      parsed.password = reveal ? password : '';
      url = parsed.toString();
    }
    if (values.json) {
      console.log(JSON.stringify({ username, client_ids: clientIds, ...(reveal ? { password } : {}), ...(url ? { url } : {}) }));
    } else if (url) {
      console.log(url);
    } else {
      console.log(`LOOKOUT_MQTT_USERNAME=${username}`);
      if (reveal) console.log(`LOOKOUT_MQTT_PASSWORD=${password}`);
    }
    if (!reveal) console.error(`client ids: ${clientIds}; the password is not shown: --reveal prints it`);
    return 0;
  },
});

/** `lookout broker-acl`: the bus ACL as a mosquitto acl_file, its password_files and the mosquitto.conf lines that use them. */
export const brokerAclCommand = defineCommand({
  summary: 'write the bus ACL as a mosquitto acl_file (and the password_files of the devices and of the hub and operator, and the listeners that use them)',
  usage:
    'lookout broker-acl [--out <acl_file>] [--password-file <file> --devices <id,id,…>] [--admin-password-file <file>] [--conf <snippet> [--bind <ip>] [--port <n>] [--admin-port <n>] [--certfile <f> --keyfile <f> [--cafile <f> [--require-certificate]]]] [--hub-data-dir <dir>]',
  synopsis: `lookout broker-acl [--out <acl_file>] [--password-file <file> --devices <id,id,…>] [--admin-password-file <file>]
                   [--conf <snippet> [--bind <ip>] [--port <n>] [--admin-port <n>]
                    [--certfile <f> --keyfile <f> [--cafile <f> [--require-certificate]]]] [--hub-data-dir <dir>]`,
  positionals: false,
  about: `Writes the bus ACL as a mosquitto acl_file (each device writes only its own topics; the hub and the
operator read all). --password-file writes the devices' password_file (the given devices), and
--admin-password-file the one of the hub and the operator, their passwords derived from the hub's
fleet secret. --conf writes the mosquitto.conf lines that use them: two listeners with their own
settings, the devices' (port 1883; 8883 with TLS), where a device's client id is its user name so
that no device can take another's session, and the hub's and operator tools' (1884; 8884 with TLS),
where each client keeps a client id of its own (two hubs, a hub's replicas, several lookout tap).
Plain MQTT listens on 127.0.0.1 unless --bind gives another address; with --certfile and --keyfile
the listeners are TLS and serve every interface (or --bind). With --cafile (the fleet CA) and
--require-certificate, each device authenticates by its fleet certificate instead of a password:
its CN, the device id, is its user name (require_certificate, use_identity_as_username); the ACL
and the client id rule stay. Without --out the ACL goes to stdout.`,
  examples: [
    `lookout broker-acl --out /etc/mosquitto/lookout/acl --password-file /etc/mosquitto/lookout/passwd --devices cam-1,cam-2 \\`,
    `  --admin-password-file /etc/mosquitto/lookout/passwd-admin --conf /etc/mosquitto/conf.d/lookout.conf \\`,
    `  --certfile /etc/mosquitto/certs/broker.crt --keyfile /etc/mosquitto/certs/broker.key`,
  ],
  exits: BASE_EXITS,
  options: {
    ...HUB_DATA_DIR,
    out: { type: 'string' },
    'password-file': { type: 'string' },
    'admin-password-file': { type: 'string' },
    devices: { type: 'string' },
    conf: { type: 'string' },
    bind: { type: 'string' },
    port: { type: 'string' },
    'admin-port': { type: 'string' },
    certfile: { type: 'string' },
    keyfile: { type: 'string' },
    cafile: { type: 'string' },
    'require-certificate': { type: 'boolean' },
  },
  async run({ values }) {
    // Checked before anything is written: a half-written broker setup is worse than none.
    const conf = values.conf ? confOptions(values) : undefined;
    const acl = mosquittoAcl();
    if (values.out) await writeFile(values.out, acl, { mode: 0o644 });
    else process.stdout.write(acl);
    const devicesFile = values['password-file'];
    const adminFile = values['admin-password-file'];
    if (devicesFile || adminFile) {
      const secret = await fleetSecret(values['hub-data-dir']);
      if (devicesFile) {
        const devices = (values.devices ?? '')
          .split(',')
          .map((d) => d.trim())
          .filter(Boolean);
        const lines = devices.map((id) => {
          const { username, password } = deviceBusCredentials(secret, id);
          return mosquittoPasswordLine(username, password);
        });
        await writeFile(devicesFile, lines.length ? `${lines.join('\n')}\n` : '', { mode: 0o600 });
      }
      if (adminFile) {
        const lines = [HUB_BUS_USER, OPERATOR_BUS_USER].map((u) => mosquittoPasswordLine(u, busPassword(secret, u)));
        await writeFile(adminFile, `${lines.join('\n')}\n`, { mode: 0o600 });
      }
    }
    if (values.conf && conf) await writeFile(values.conf, mosquittoConf(conf), { mode: 0o644 });
    return 0;
  },
});

/** The --conf options, refused as a usage error when a file the snippet names is not being written or a port is bad. */
function confOptions(values: Record<string, string | boolean | undefined>): MosquittoConfOptions {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  const aclFile = str('out');
  const devicePasswordFile = str('password-file');
  const adminPasswordFile = str('admin-password-file');
  if (!aclFile || !devicePasswordFile || !adminPasswordFile) {
    throw new LookoutError('config_invalid', '--conf names the files it uses: give --out, --password-file and --admin-password-file with it', {
      details: { usage: true },
    });
  }
  const port = (k: string): number | undefined => {
    const v = str(k);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > 65_535) throw new LookoutError('config_invalid', `--${k}: a TCP port, not "${v}"`, { details: { usage: true } });
    return n;
  };
  const certfile = str('certfile');
  const keyfile = str('keyfile');
  const cafile = str('cafile');
  if (Boolean(certfile) !== Boolean(keyfile) || (cafile && !certfile)) {
    throw new LookoutError('config_invalid', 'TLS needs --certfile and --keyfile together (--cafile with them)', { details: { usage: true } });
  }
  const requireCertificate = values['require-certificate'] === true;
  if (requireCertificate && !cafile) {
    throw new LookoutError(
      'config_invalid',
      '--require-certificate needs --certfile, --keyfile and --cafile (the CA the devices’ certificates are checked against)',
      {
        details: { usage: true },
      },
    );
  }
  const devicePort = port('port');
  const adminPort = port('admin-port');
  const bind = str('bind');
  return {
    aclFile,
    devicePasswordFile,
    adminPasswordFile,
    ...(bind !== undefined ? { bind } : {}),
    ...(devicePort !== undefined ? { devicePort } : {}),
    ...(adminPort !== undefined ? { adminPort } : {}),
    ...(certfile && keyfile ? { tls: { certfile, keyfile, ...(cafile ? { cafile } : {}), ...(requireCertificate ? { requireCertificate } : {}) } } : {}),
  };
}
