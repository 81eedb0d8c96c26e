import { parseArgs } from 'node:util';

/** What one soak run does; every figure has a flag (`--help` lists them). */
export interface SoakOptions {
  minutes: number;
  /** Devices in all: `realDevices` lookout-edge processes, the rest simulated in this process. */
  devices: number;
  realDevices: number;
  detsHz: number;
  telemetryHz: number;
  healthSec: number;
  statusSec: number;
  /** Malformed MQTT messages per second. */
  floodRate: number;
  /** Bad HTTP requests per second. */
  httpFloodRate: number;
  /** Concurrent tool calls per real device in one burst. */
  toolBurst: number;
  toolEverySec: number;
  reportEverySec: number;
  brokerRestarts: number;
  hubRestarts: number;
  maxHubRssMb: number;
  maxBrokerRssMb: number;
  maxDeviceRssMb: number;
  /** How long counts may take to settle after publishing stops (and before a hub restart). */
  drainSec: number;
  seed: number;
  /** Counts above the device's own (QoS 1 duplicates) are noted, not failures. */
  allowDuplicates: boolean;
  help: boolean;
}

export const SOAK_USAGE = `Usage: node dist/test/soak/soak.js [options]     (npm run soak -- [options])

A bounded soak on 127.0.0.1: mosquitto, lookout-hub --mqtt, a few lookout-edge --source sim devices,
the rest of the fleet simulated as MQTT clients publishing spec-shaped QoS 1 messages with sequence
numbers, a client flooding malformed and oversized messages, bursts of concurrent tool calls; the
broker restarted twice and the hub once. Exits 0 when every bound held, 1 when one broke, 2 when it
could not set up or overran its own deadline.

  --minutes <n>            publishing time (default 10; fractions allowed, e.g. 0.5)
  --devices <n>            devices in all (default 200)
  --real-devices <n>       lookout-edge processes among them (default 4)
  --dets-hz <n>            dets per simulated device per second (default 2)
  --telemetry-hz <n>       telemetry per simulated device per second (default 1)
  --health-sec <n>         seconds between health messages (default 10)
  --status-sec <n>         seconds between retained status messages (default 60)
  --flood-rate <n>         malformed MQTT messages per second (default 100)
  --http-flood-rate <n>    malformed HTTP requests per second (default 5)
  --tool-burst <n>         concurrent tool calls per real device per burst (default 100)
  --tool-every-sec <n>     seconds between bursts (default 15)
  --report-every-sec <n>   seconds between progress lines (default 30)
  --broker-restarts <n>    (default 2)
  --hub-restarts <n>       (default 1)
  --max-hub-rss-mb <n>     bound on the hub's RSS (default 512)
  --max-broker-rss-mb <n>  bound on mosquitto's RSS (default 256)
  --max-device-rss-mb <n>  bound on a lookout-edge process's RSS (default 400)
  --drain-sec <n>          how long counts may take to settle (default 60)
  --seed <n>               flood PRNG seed (default 11)
  --allow-duplicates       a hub count above the device's own (a QoS 1 duplicate) is noted,
                           not a failure (default: every count must equal the device's own)
  -h, --help
`;

const FLAGS = {
  minutes: { type: 'string' },
  devices: { type: 'string' },
  'real-devices': { type: 'string' },
  'dets-hz': { type: 'string' },
  'telemetry-hz': { type: 'string' },
  'health-sec': { type: 'string' },
  'status-sec': { type: 'string' },
  'flood-rate': { type: 'string' },
  'http-flood-rate': { type: 'string' },
  'tool-burst': { type: 'string' },
  'tool-every-sec': { type: 'string' },
  'report-every-sec': { type: 'string' },
  'broker-restarts': { type: 'string' },
  'hub-restarts': { type: 'string' },
  'max-hub-rss-mb': { type: 'string' },
  'max-broker-rss-mb': { type: 'string' },
  'max-device-rss-mb': { type: 'string' },
  'drain-sec': { type: 'string' },
  seed: { type: 'string' },
  'allow-duplicates': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function parseSoakOptions(argv: string[]): SoakOptions {
  const { values } = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false });
  const num = (flag: keyof typeof FLAGS, fallback: number, min: number, max: number, integer = true): number => {
    const raw = values[flag];
    if (typeof raw !== 'string') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new Error(`--${flag} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got "${raw}"`);
    }
    return n;
  };
  const devices = num('devices', 200, 1, 5000);
  const options: SoakOptions = {
    minutes: num('minutes', 10, 0.1, 120, false),
    devices,
    realDevices: num('real-devices', Math.min(4, devices), 0, 16),
    detsHz: num('dets-hz', 2, 0, 20, false),
    telemetryHz: num('telemetry-hz', 1, 0, 20, false),
    healthSec: num('health-sec', 10, 1, 3600, false),
    statusSec: num('status-sec', 60, 1, 3600, false),
    floodRate: num('flood-rate', 100, 0, 10_000),
    httpFloodRate: num('http-flood-rate', 5, 0, 200),
    toolBurst: num('tool-burst', 100, 0, 1000),
    toolEverySec: num('tool-every-sec', 15, 1, 3600, false),
    reportEverySec: num('report-every-sec', 30, 1, 3600, false),
    brokerRestarts: num('broker-restarts', 2, 0, 20),
    hubRestarts: num('hub-restarts', 1, 0, 20),
    maxHubRssMb: num('max-hub-rss-mb', 512, 16, 65_536),
    maxBrokerRssMb: num('max-broker-rss-mb', 256, 4, 65_536),
    maxDeviceRssMb: num('max-device-rss-mb', 400, 16, 65_536),
    drainSec: num('drain-sec', 60, 5, 3600, false),
    seed: num('seed', 11, 0, 2 ** 31),
    allowDuplicates: values['allow-duplicates'] === true,
    help: values.help === true,
  };
  if (options.realDevices > options.devices) throw new Error(`--real-devices (${options.realDevices}) is more than --devices (${options.devices})`);
  return options;
}
