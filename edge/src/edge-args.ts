import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LookoutError } from 'lookout/core';
import { DEFAULT_TOOL_HOST, DEFAULT_TOOL_PORT } from './tool-server.js';
import { DEFAULT_MQTT_URL } from './device-runtime.js';

export type EdgeMode = 'run' | 'help' | 'health' | 'check-update' | 'tool';

export interface EdgeArgs {
  mode: EdgeMode;
  deviceId: string;
  image: string;
  layer?: string;
  layerEnv?: string;
  mqtt: string;
  mqttUsername?: string;
  /** --mqtt-ca / --mqtt-cert / --mqtt-key (or LOOKOUT_MQTT_CA, _CERT, _KEY): TLS files of an mqtts:// broker. */
  mqttTls: { ca?: string; cert?: string; key?: string };
  toolPort: number;
  toolHost: string;
  /** --tool-tls: HTTPS on loopback too. */
  toolTls: boolean;
  /** --insecure-tool-http: plain HTTP beyond loopback. */
  insecureToolHttp: boolean;
  role?: string;
  dataDir: string;
  source?: 'sim';
  /** --tool */
  tool?: string;
  /** --args, a JSON object */
  args: Record<string, unknown>;
  /** Ports of other surfaces by name, from their flags. */
  ports: Record<string, number>;
  logLevel?: string;
}

/** Flags of the surfaces later plugins open; each maps to a port name announced in hello. */
export const PORT_FLAGS = {
  'onvif-port': 'onvif',
  'ws-discovery-port': 'ws_discovery',
  'rtsp-port': 'rtsp',
  'rtsps-port': 'rtsps',
  'mesh-port': 'mesh',
  'sidecar-port': 'sidecar',
} as const;

const OPTIONS = {
  'device-id': { type: 'string' },
  image: { type: 'string' },
  layer: { type: 'string' },
  'layer-env': { type: 'string' },
  mqtt: { type: 'string' },
  'mqtt-username': { type: 'string' },
  'mqtt-ca': { type: 'string' },
  'mqtt-cert': { type: 'string' },
  'mqtt-key': { type: 'string' },
  'tool-port': { type: 'string' },
  'tool-host': { type: 'string' },
  'tool-tls': { type: 'boolean' },
  'insecure-tool-http': { type: 'boolean' },
  role: { type: 'string' },
  'data-dir': { type: 'string' },
  source: { type: 'string' },
  health: { type: 'boolean' },
  'check-update': { type: 'boolean' },
  tool: { type: 'string' },
  args: { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ...Object.fromEntries(Object.keys(PORT_FLAGS).map((f) => [f, { type: 'string' }])),
} as const;

/** A command-line mistake: `lookout-edge` prints it with the usage and exits 2. */
export function usageError(message: string): LookoutError {
  return new LookoutError('config_invalid', message, { details: { usage: true } });
}

export function isUsageError(err: unknown): boolean {
  return err instanceof LookoutError && (err.details as { usage?: boolean } | undefined)?.usage === true;
}

/**
 * Parses `lookout-edge` flags. Unknown flags, stray arguments, bad numbers and conflicting modes are
 * usage errors naming the flag. `cwd` anchors the development data root of `--source sim`.
 */
export function parseEdgeArgs(argv: string[], env: Record<string, string | undefined> = {}, cwd = process.cwd()): EdgeArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const str = (k: string): string | undefined => values[k] as string | undefined;

  const modes = [values.help && 'help', values.health && 'health', values['check-update'] && 'check-update', str('tool') !== undefined && 'tool'].filter(
    Boolean,
  ) as EdgeMode[];
  if (modes.length > 1) throw usageError(`choose one of --help, --health, --check-update, --tool (got ${modes.map((m) => `--${m}`).join(', ')})`);
  const mode: EdgeMode = modes[0] ?? 'run';
  if (str('args') !== undefined && mode !== 'tool') throw usageError('--args goes with --tool <name>');
  if (str('layer') !== undefined && str('layer-env') !== undefined) throw usageError('give either --layer or --layer-env, not both');

  const source = str('source');
  if (source !== undefined && source !== 'sim') throw usageError(`--source ${source} is not supported; the only source is sim`);

  const deviceId = str('device-id') ?? hostname().replace(/[^A-Za-z0-9_.-]/g, '-');
  const dataDir = str('data-dir') !== undefined ? resolve(cwd, str('data-dir')!) : source === 'sim' ? join(cwd, '.lookout', 'devices', deviceId) : '/';

  const ports: Record<string, number> = {};
  for (const [flag, name] of Object.entries(PORT_FLAGS)) {
    const v = str(flag);
    if (v !== undefined) ports[name] = port(flag, v);
  }

  const parsed: EdgeArgs = {
    mode,
    deviceId,
    image: str('image') ?? 'camera',
    mqtt: str('mqtt') ?? DEFAULT_MQTT_URL,
    mqttTls: {},
    toolPort: str('tool-port') !== undefined ? port('tool-port', str('tool-port')!) : DEFAULT_TOOL_PORT,
    toolHost: str('tool-host') ?? DEFAULT_TOOL_HOST,
    toolTls: values['tool-tls'] === true,
    insecureToolHttp: values['insecure-tool-http'] === true,
    dataDir,
    args: str('args') !== undefined ? jsonObject(str('args')!) : {},
    ports,
  };
  if (str('layer') !== undefined) parsed.layer = str('layer')!;
  if (str('layer-env') !== undefined) parsed.layerEnv = resolve(cwd, str('layer-env')!);
  const username = str('mqtt-username') ?? env.LOOKOUT_MQTT_USERNAME;
  if (username !== undefined) parsed.mqttUsername = username;
  for (const [k, env_] of [
    ['ca', 'LOOKOUT_MQTT_CA'],
    ['cert', 'LOOKOUT_MQTT_CERT'],
    ['key', 'LOOKOUT_MQTT_KEY'],
  ] as const) {
    const v = str(`mqtt-${k}`) ?? (env[env_] || undefined);
    if (v !== undefined) parsed.mqttTls[k] = resolve(cwd, v);
  }
  if (str('role') !== undefined) parsed.role = str('role')!;
  if (source === 'sim') parsed.source = 'sim';
  if (str('tool') !== undefined) parsed.tool = str('tool')!;
  if (str('log-level') !== undefined) parsed.logLevel = str('log-level')!;
  return parsed;
}

function port(flag: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw usageError(`--${flag} ${value} is not a port (0-65535; 0 picks a free one)`);
  return Number(value);
}

function jsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usageError(`--args is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw usageError('--args must be a JSON object, e.g. --args \'{"fps": 10}\'');
  return value as Record<string, unknown>;
}

export const EDGE_USAGE = `lookout-edge: the Lookout device runtime

Usage:
  lookout-edge [options]                      run the device (MQTT bus, tool server on :8765)
  lookout-edge --health [options]             print the system health as JSON; exit 1 when critical
  lookout-edge --check-update [options]       compare the running version with the update manifest
  lookout-edge --tool <name> [--args <json>]  call one device tool in-process and print the answer

The one-shot modes (--health, --check-update, --tool) start the plugins in-process, without a
broker and without listening, print JSON on stdout and exit 0, or 1 when the tool failed.

Options:
  --device-id <id>        device identifier, one MQTT topic level (default: the host name)
  --image <name|path>     device image: camera, precision or a path to an image file (default camera)
  --layer <alias>         configuration layer: layer0..layer5 or an alias (layer2_tracker, full, ...)
  --layer-env <file>      a layer env file naming its layer in EDGE_V3_LAYER (instead of --layer)
                          neither: <data-dir>/data/config/edge_v3_layer.env, else layer2
  --mqtt <url>            broker (default ${DEFAULT_MQTT_URL}); credentials may be in the URL
  --mqtt-username <name>  broker user (also LOOKOUT_MQTT_USERNAME); the password only from
                          the environment, LOOKOUT_MQTT_PASSWORD, never on the command line
  --mqtt-ca <file>        with an mqtts:// broker: the CA its certificate must chain to (also
                          LOOKOUT_MQTT_CA; default <data-dir>/data/config/fleet_ca.crt when there)
  --mqtt-cert <file>, --mqtt-key <file>   a client certificate for a broker that asks for one
                          (also LOOKOUT_MQTT_CERT/_KEY; default the device's fleet certificate
                          <data-dir>/data/config/shadow_peer.crt|.key when there)
  --tool-port <n>         MCP tool server port (default ${DEFAULT_TOOL_PORT}; 0 picks a free one)
  --tool-host <addr>      tool server address (default ${DEFAULT_TOOL_HOST}; 0.0.0.0 on a device); beyond
                          loopback callers need the device's tool token (see Environment) and it
                          serves HTTPS with the device certificate (/data/config/shadow_peer.crt)
  --tool-tls              HTTPS on a loopback --tool-host too
  --insecure-tool-http    plain HTTP beyond loopback (the token crosses the network in clear; warned)
  --role <label>          role label, the device's camera_id (default: the image's role)
  --data-dir <dir>        root of the device paths (/data/config, /data/recordings, ...); default /,
                          or .lookout/devices/<device-id> with --source sim
  --source sim            simulated sensors and frames; ports not given are chosen free
  --onvif-port <n>, --ws-discovery-port <n>, --rtsp-port <n>, --rtsps-port <n>, --mesh-port <n>, --sidecar-port <n>
                          ports of the surfaces later plugins open (announced in hello)
  --log-level <level>     pino level (default info; warn in the one-shot modes); logs go to stderr
  -h, --help              this text

Plugin settings (HEALTH_INTERVAL_MS, DIE_TEMP_SOURCE, ...) come from the layer env file; the same
keys in the environment override it.

Environment (secrets only here, never on the command line):
  LOOKOUT_TOOL_TOKEN      bearer token the tool server requires from callers beyond loopback
  LOOKOUT_FLEET_SECRET    or the fleet secret, from which the token is derived as the hub derives it
                          (HMAC-SHA256(secret, "tools:<device-id>")); a --tool-host beyond loopback
                          without either refuses to start

The broker may be away: the device works without it (QoS 1 messages wait in an outbox under
<data-dir>/data/outbox, on disk) and joins whenever it answers, trying again for ever.
  LOOKOUT_BUS_RECONNECT_MAX_MS   longest wait between two tries (default 30000)
  LOOKOUT_OUTBOX_MAX_MESSAGES    messages kept at most, the oldest dropped first (default 50000)
  LOOKOUT_OUTBOX_MAX_BYTES       bytes kept at most (default 33554432)
  LOOKOUT_OUTBOX_FLUSH_MS        how often what waits is written to disk (default 500)

On start the device prints one JSON line on stdout: {"event":"ready","device_id",...,"ports":{...}}.
SIGTERM or SIGINT: offline status, plugins stopped, exit 0.
`;
