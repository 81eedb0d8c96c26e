import { parseArgs } from 'node:util';
import { LookoutError } from 'lookout/core';
import type { HubOptions } from './hub-options.js';

export const HUB_USAGE = `Usage: lookout-hub [options]

The fleet proxy: HTTP on 8788 composed from the hub plugins' routes, the bus cache, the registry,
tool forwarding to devices, the debug ring and fleet health.

  --port <n>               HTTP port (default 8788; 0 picks a free one)
  --host <addr>            listen address (default 127.0.0.1; 0.0.0.0 with --token). Beyond
                           loopback the hub serves HTTPS only: with --tls-cert/--tls-key, else the
                           fleet-CA certificate <data-dir>/tls/hub-server.crt (lookout certs
                           --hub-data); without one it does not start
  --tls-cert <file>        serve HTTPS with this PEM certificate (chain) and --tls-key <file>, its
                           key; both are read again on SIGHUP and when the files change, without
                           dropping connections
  --tls                    HTTPS on a loopback address too (default there: plain HTTP)
  --insecure-http          plain HTTP beyond loopback (the token crosses the network in clear;
                           warned at start)
  --mqtt <url>             external broker, e.g. mqtt://broker:1883 (default: the embedded broker);
                           with a password, LOOKOUT_HUB_MQTT=mqtt://user:pass@broker:1883 instead
                           (a flag's value is in the process list)
  --mqtt-ca <file>         with an mqtts:// --mqtt: the PEM CA(s) the broker's certificate must chain to
                           (default: Node's public roots and the fleet CA of <data-dir>/tls/fleet_ca.crt)
  --state <url>            redis://[user:pass@]host:port[/db] (or LOOKOUT_HUB_STATE): hub state and shared state in Redis.
                           With --mqtt (an MQTT 5 broker) the hub runs as one of several replicas
                           sharing the device ingest (default: files under --data-dir, one hub)
  --state-prefix <p>       prefix of the Redis keys, one per fleet (default lookout:)
  --mqtt-group <name>      shared-subscription group of the replicas (default lookout-hub)
  --stream-retention-s <n> how long the replicas' shared ingest stream keeps messages in Redis
                           (default 900; its memory is this times the fleet's message rate: a
                           replica away longer starts from the saved cache)
  --mirror-interval-ms <n> replicas divide the apply: each applies every message of the devices it
                           owns (shared out among the live replicas) and, of the others, the newest
                           dets and telemetry once they waited n ms (at most 10000) or when read
                           (default 1000; 0: every replica applies every message; docs/replicas.md)
  --broker-port <n>        embedded broker port (default 1883; 0 picks a free one)
  --broker-host <addr>     embedded broker listen address (default as --host). Beyond loopback
                           the broker speaks MQTT over TLS there (--broker-tls-port) with the
                           certificate the hub serves HTTPS with, and plain MQTT stays on 127.0.0.1
  --broker-tls-port <n>    the broker's TLS listener (default 8883; 0 picks a free one)
  --broker-tls-cert <file> the broker's TLS certificate and --broker-tls-key <file>, its key
                           (default the hub's); reloaded on SIGHUP and when the files change.
                           Given with a loopback --broker-host, TLS listens there too
  --insecure-mqtt          plain MQTT beyond loopback instead of TLS (device passwords cross the
                           network in clear; warned at start)
  --broker-max-connections <n>   embedded broker connections in all (default: the open-files
                           limit less a reserve for HTTP and state); more are closed at once
  --broker-max-per-address <n>   embedded broker connections per remote address
                           (default a quarter of the total, at most 1024)
  --broker-connect-timeout-ms <n>  time from accept to a complete CONNECT (default 10000)
  --registry <file>        registry file (JSON; see hub/README.md); must exist when given
  --data-dir <dir>         hub data folder (default .lookout-dev/hub; registry.json there is used)
  --builder-url <url>      the model builder (lookout-builder) the hub passes /api/* through to
                           (or LOOKOUT_BUILDER_URL; its token: LOOKOUT_BUILDER_TOKEN)
  --token <secret>         bearer token for every route but /health (or LOOKOUT_HUB_TOKEN).
                           Without one the hub listens on 127.0.0.1 only.
  --broker-anonymous       development only: the embedded broker takes anonymous clients with
                           every right (loopback only). By default every client authenticates as
                           itself: devices with their id and a password derived from the fleet
                           secret (LOOKOUT_FLEET_SECRET, else <data-dir>/fleet-secret, created on
                           first start; \`lookout device-credentials <id>\` prints a device's)
  --device-networks <list> CIDRs a device announced by hello may be contacted in
                           (default 127.0.0.0/8)
  --cors-origin <origin>   allow this browser origin (repeat or comma-separate; * for any);
                           a POST from any other origin is refused (403)
  --host-name <name>       a name the hub answers to besides loopback ones (repeat or
                           comma-separate); without --token any other Host is refused (403)
  --plugin-set <file>      hub plugin set (default configs/hub/plugins.json)
  --stale-sec <n>          cache staleness threshold (default 120)
  --max-message-bytes <n>  largest bus message ingested (default 262144)
  --ring-size <n>          debug ring capacity per lane (default 2000)
  --ring-max-bytes <n>     debug ring bound in bytes (default 4194304)
  --tool-timeout-ms <n>    tool call timeout (default 15000)
  --log-level <level>      pino level (default info; logs go to stderr)
  --json                   print one JSON line with the URLs instead of the text banner
  -h, --help               this help
`;

export interface HubArgs {
  help: boolean;
  json: boolean;
  logLevel?: string;
  options: HubOptions;
}

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  tls: { type: 'boolean' },
  'insecure-http': { type: 'boolean' },
  mqtt: { type: 'string' },
  'mqtt-ca': { type: 'string' },
  state: { type: 'string' },
  'state-prefix': { type: 'string' },
  'mqtt-group': { type: 'string' },
  'stream-retention-s': { type: 'string' },
  'mirror-interval-ms': { type: 'string' },
  'broker-port': { type: 'string' },
  'broker-host': { type: 'string' },
  'broker-tls-port': { type: 'string' },
  'broker-tls-cert': { type: 'string' },
  'broker-tls-key': { type: 'string' },
  'insecure-mqtt': { type: 'boolean' },
  'broker-max-connections': { type: 'string' },
  'broker-max-per-address': { type: 'string' },
  'broker-connect-timeout-ms': { type: 'string' },
  registry: { type: 'string' },
  'builder-url': { type: 'string' },
  'data-dir': { type: 'string' },
  token: { type: 'string' },
  'device-networks': { type: 'string' },
  'cors-origin': { type: 'string', multiple: true },
  'host-name': { type: 'string', multiple: true },
  'plugin-set': { type: 'string' },
  'stale-sec': { type: 'string' },
  'max-message-bytes': { type: 'string' },
  'ring-size': { type: 'string' },
  'ring-max-bytes': { type: 'string' },
  'tool-timeout-ms': { type: 'string' },
  'log-level': { type: 'string' },
  json: { type: 'boolean' },
  'broker-anonymous': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `env` names the variable to use instead of a flag whose value the process list would show. */
const SECRET_FLAGS: Record<string, { env: string; secret: (value: string) => boolean }> = {
  token: { env: 'LOOKOUT_HUB_TOKEN', secret: (v) => v.length > 0 },
  mqtt: { env: 'LOOKOUT_HUB_MQTT', secret: urlHasPassword },
  state: { env: 'LOOKOUT_HUB_STATE', secret: urlHasPassword },
};

function urlHasPassword(value: string): boolean {
  try {
    return new URL(value).password !== '';
  } catch {
    return false;
  }
}

/**
 * The flags given a secret on the command line (every local user reads it in the process list), each
 * with the environment variable that keeps it out: the hub warns at start.
 */
export function secretsOnCommandLine(argv: readonly string[]): { flag: string; env: string }[] {
  const found: { flag: string; env: string }[] = [];
  argv.forEach((arg, i) => {
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const rule = m ? SECRET_FLAGS[m[1]] : undefined;
    const value = m?.[2] ?? argv[i + 1];
    if (rule && value !== undefined && rule.secret(value)) found.push({ flag: `--${m![1]}`, env: rule.env });
  });
  return found;
}

export function usageError(message: string): LookoutError {
  return new LookoutError('config_invalid', message, { details: { usage: true } });
}

/** Parses `lookout-hub` flags; a mistake is a usage error naming the flag. */
export function parseHubArgs(argv: string[], env: Record<string, string | undefined> = {}): HubArgs {
  let values: {
    -readonly [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K] extends { multiple: true }
      ? string[]
      : (typeof OPTIONS)[K]['type'] extends 'boolean'
        ? boolean
        : string;
  };
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }) as { values: typeof values });
  } catch (err) {
    throw usageError((err as Error).message);
  }
  // URLs that carry a password may come from the environment instead, out of the process list.
  values.mqtt ??= env.LOOKOUT_HUB_MQTT || undefined;
  values.state ??= env.LOOKOUT_HUB_STATE || undefined;
  const int = (flag: keyof typeof OPTIONS, min: number, max: number): number | undefined => {
    const raw = values[flag] as string | undefined;
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) throw usageError(`--${flag} must be an integer from ${min} to ${max}, got "${raw}"`);
    return n;
  };
  const options: HubOptions = {};
  const set = <K extends keyof HubOptions>(key: K, value: HubOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  set('port', int('port', 0, 65535));
  set('host', values.host);
  set('tlsCert', values['tls-cert']);
  set('tlsKey', values['tls-key']);
  if (values.tls) set('tls', true);
  if (values['insecure-http']) set('insecureHttp', true);
  set('mqttUrl', values.mqtt);
  if (values['mqtt-ca'] !== undefined && values.mqtt === undefined) throw usageError('--mqtt-ca is for an external mqtts:// broker: it needs --mqtt');
  set('mqttCa', values['mqtt-ca']);
  set('brokerPort', int('broker-port', 0, 65535));
  set('brokerHost', values['broker-host']);
  set('brokerTlsPort', int('broker-tls-port', 0, 65535));
  set('brokerTlsCert', values['broker-tls-cert']);
  set('brokerTlsKey', values['broker-tls-key']);
  if (values['insecure-mqtt']) set('insecureMqtt', true);
  set('brokerMaxConnections', int('broker-max-connections', 1, 10_000_000));
  set('brokerMaxConnectionsPerAddress', int('broker-max-per-address', 1, 10_000_000));
  set('brokerConnectTimeoutMs', int('broker-connect-timeout-ms', 100, 600_000));
  set('registryFile', values.registry);
  set('builderUrl', values['builder-url']);
  set('dataDir', values['data-dir']);
  set('token', values.token ?? (env.LOOKOUT_HUB_TOKEN || undefined));
  if (values['broker-anonymous']) set('anonymousBroker', true);
  set(
    'deviceNetworks',
    values['device-networks']
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  set(
    'corsOrigins',
    values['cors-origin']
      ?.flatMap((o) => o.split(','))
      .map((s) => s.trim())
      .filter(Boolean),
  );
  set(
    'hostNames',
    values['host-name']
      ?.flatMap((o) => o.split(','))
      .map((s) => s.trim())
      .filter(Boolean),
  );
  set('pluginSet', values['plugin-set']);
  set('staleSec', int('stale-sec', 1, 86_400 * 365));
  set('maxMessageBytes', int('max-message-bytes', 256, 256 * 1024 * 1024));
  set('ringSize', int('ring-size', 10, 1_000_000));
  set('ringMaxBytes', int('ring-max-bytes', 64 * 1024, 1024 * 1024 * 1024));
  set('toolTimeoutMs', int('tool-timeout-ms', 50, 600_000));
  const embeddedOnly = ['broker-port', 'broker-host', 'broker-tls-port', 'broker-tls-cert', 'broker-tls-key', 'insecure-mqtt'] as const;
  if (values.mqtt !== undefined && embeddedOnly.some((f) => values[f] !== undefined)) {
    throw usageError(`--mqtt names an external broker; ${embeddedOnly.map((f) => `--${f}`).join(', ')} are for the embedded one`);
  }
  if (values.mqtt !== undefined && !/^(mqtts?|wss?):\/\//.test(values.mqtt)) throw usageError(`--mqtt must be an mqtt://, mqtts://, ws:// or wss:// URL`);
  if (values.state !== undefined && !/^rediss?:\/\/[^\s]+$/.test(values.state)) throw usageError('--state must be a redis:// or rediss:// URL');
  if (values['state-prefix'] !== undefined && !/^[A-Za-z0-9:_.-]{1,64}$/.test(values['state-prefix'])) {
    throw usageError('--state-prefix takes 1 to 64 letters, digits, ":", "_", "." or "-"');
  }
  if (values['mqtt-group'] !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(values['mqtt-group'])) {
    throw usageError('--mqtt-group takes 1 to 64 letters, digits, "_", "." or "-" (no MQTT wildcards or "/")');
  }
  for (const flag of ['mqtt-group', 'stream-retention-s', 'mirror-interval-ms'] as const) {
    if (values[flag] !== undefined && (values.state === undefined || values.mqtt === undefined)) {
      throw usageError(`--${flag} is for replicas: it needs --mqtt (an MQTT 5 broker) and --state redis://…`);
    }
  }
  set('stateUrl', values.state);
  set('statePrefix', values['state-prefix']);
  set('mqttGroup', values['mqtt-group']);
  set('streamRetentionS', int('stream-retention-s', 60, 86_400));
  set('mirrorIntervalMs', int('mirror-interval-ms', 0, 10_000));
  const out: HubArgs = { help: values.help === true, json: values.json === true, options };
  if (values['log-level'] !== undefined) out.logLevel = values['log-level'];
  return out;
}
