import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LookoutError } from 'lookout/core';
import { provisionFleetCertificates, type FleetCertificatesReport, type FleetCertificatesRequest } from 'lookout/lib/tls';
import { certsStatus, certsStatusExitCode, certsStatusTable, parseCertsStatusArgs } from './certs-status.js';
import { BASE_EXITS, type OperatorCommand } from './command-spec.js';
import { EXIT } from './exit-codes.js';

const USAGE =
  'lookout certs --ca-dir <dir> [--device <id> --data-root <dir> [--ip <addr>]...]... [--hub-data <dir> [--hub-host <name>] [--san <name|addr>]...] [--renew] [--json]\n' +
  '       lookout certs status --ca-dir <dir> [--json]';

const HELP = `${USAGE}

Creates the fleet CA in --ca-dir on first use (ca.crt, and ca.key mode 0600: keep it off the
devices), then issues what is asked:
  --device <id> --data-root <dir> [--ip <addr>]...
      a device certificate (CN and SAN DNS = the id, SAN IPs = the --ip given after it; serverAuth
      and clientAuth) at <dir>/data/config/shadow_peer.crt and .key (0600), the CA at
      <dir>/data/config/fleet_ca.crt. Repeat the group for each device.
  --hub-data <dir> [--hub-host <name>] [--san <name|addr>]...
      the hub's client certificate (CN lookout-hub, clientAuth) for signed peer queries, at
      <dir>/tls/hub.crt and hub.key (0600), and its HTTPS server certificate (CN --hub-host,
      default this machine's host name; serverAuth; SAN that name, localhost, 127.0.0.1, ::1 and
      each --san: the names and addresses devices and browsers reach the hub by) at
      <dir>/tls/hub-server.crt and hub-server.key (0600); the CA at <dir>/tls/fleet_ca.crt. The hub
      reads them when they appear or change; no restart.
A certificate of this CA that is valid for 30 days more and names what is asked is kept (its key
made 0600 if other users could read it, and said so); one with less than 30 days left is renewed;
--renew (or --force) issues every one again. The CA itself is never replaced, and a ca.key open to
other users is refused. --json prints what was done.

lookout certs status --ca-dir <dir> shows every certificate issued from that CA (the CA, the
hub's, each device's) with its end date and the days left; exit 0 when all have 30 days or more,
3 when one expires sooner, has expired or is missing (run lookout certs again to renew it).

Examples:
  lookout certs --ca-dir ~/lookout-ca --hub-data .lookout-dev/hub
  lookout certs --ca-dir ~/lookout-ca --hub-data /var/lib/lookout-hub --hub-host hub.lan --san 10.0.0.5
  lookout certs status --ca-dir ~/lookout-ca
  lookout certs --ca-dir ~/lookout-ca --device cam-1 --data-root /mnt/cam-1 --ip 10.0.0.21
  lookout certs --ca-dir ~/lookout-ca --device cam-1 --data-root ./dev/cam-1 --ip 127.0.0.2 \\
                --device cam-2 --data-root ./dev/cam-2 --ip 127.0.0.3 --hub-data .lookout-dev/hub --json
`;

const usage = (message: string) => new LookoutError('config_invalid', `${message}\nusage: ${USAGE}`, { details: { usage: true } });

/** The command line as a provisioning request: --data-root and --ip belong to the --device before them. */
export function parseCertsArgs(args: string[]): FleetCertificatesRequest & { json: boolean; help: boolean } {
  const { values, tokens } = parseArgs({
    args,
    tokens: true,
    options: {
      'ca-dir': { type: 'string' },
      device: { type: 'string', multiple: true },
      'data-root': { type: 'string', multiple: true },
      ip: { type: 'string', multiple: true },
      'hub-data': { type: 'string' },
      'hub-host': { type: 'string' },
      san: { type: 'string', multiple: true },
      force: { type: 'boolean', default: false },
      renew: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return { caDir: '', json: false, help: true };
  const devices: { deviceId: string; dataRoot?: string; ips: string[] }[] = [];
  for (const t of tokens) {
    if (t.kind !== 'option' || !['device', 'data-root', 'ip'].includes(t.name)) continue;
    const value = t.value ?? '';
    if (t.name === 'device') {
      if (devices.some((d) => d.deviceId === value)) throw usage(`--device ${value} is given twice`);
      devices.push({ deviceId: value, ips: [] });
      continue;
    }
    const current = devices.at(-1);
    if (!current) throw usage(`--${t.name} ${value} comes before any --device: it belongs to the --device before it`);
    if (t.name === 'ip') current.ips.push(value);
    else if (current.dataRoot !== undefined) throw usage(`--device ${current.deviceId} has two --data-root`);
    else current.dataRoot = resolve(value);
  }
  for (const d of devices) if (d.dataRoot === undefined) throw usage(`--device ${d.deviceId} needs its --data-root (the root of its /data)`);
  if (!values['ca-dir']) throw usage('certs needs --ca-dir, the folder of the fleet CA (created there on first use)');
  if (devices.length === 0 && values['hub-data'] === undefined) throw usage('nothing to issue: give --device <id> --data-root <dir>, or --hub-data <dir>');
  if (values['hub-data'] === undefined && (values['hub-host'] !== undefined || values.san !== undefined)) {
    throw usage('--hub-host and --san name the hub in its server certificate: they need --hub-data');
  }
  return {
    caDir: resolve(values['ca-dir']),
    devices: devices.map((d) => ({ deviceId: d.deviceId, dataRoot: d.dataRoot!, ips: d.ips })),
    ...(values['hub-data'] !== undefined ? { hubDataDir: resolve(values['hub-data']) } : {}),
    ...(values['hub-host'] !== undefined ? { hubHostName: values['hub-host'] } : {}),
    ...(values.san !== undefined
      ? {
          hubSans: values.san
            .flatMap((v) => v.split(','))
            .map((v) => v.trim())
            .filter(Boolean),
        }
      : {}),
    force: values.force || values.renew,
    json: values.json,
    help: false,
  };
}

/** `lookout certs`: the fleet CA and the device and hub certificates of the peer sidecars and signed peer queries. */
export const certsCommand: OperatorCommand = {
  summary:
    'create the fleet CA (first use), issue and renew the device certificates and the hub’s client and HTTPS server certificates; `certs status` shows their expiry; --help for examples',
  usage: USAGE,
  // certs parses its own groups (--device … --data-root … per device) and prints its own help.
  exits: [...BASE_EXITS, [EXIT.authRefused, 'certs status: a certificate expires within 30 days, has expired or is missing']],
  async run(args) {
    if (args[0] === 'status') {
      const options = parseCertsStatusArgs(args.slice(1));
      const status = await certsStatus(options.caDir);
      console.log(options.json ? JSON.stringify(status) : certsStatusTable(status));
      return certsStatusExitCode(status);
    }
    const { json, help, ...request } = parseCertsArgs(args);
    if (help) {
      process.stdout.write(HELP);
      return 0;
    }
    const report = await provisionFleetCertificates(request);
    console.log(json ? JSON.stringify(report) : certsTable(report));
    return 0;
  },
};

export function certsTable(report: FleetCertificatesReport): string {
  const lines = [`fleet CA     ${report.ca.created ? 'created' : 'kept   '}  ${report.ca.certPath}  ${report.ca.fingerprint}`];
  for (const c of report.certificates) {
    const names = [...c.dnsNames, ...c.ips].join(', ') || '-';
    lines.push(
      `${c.name.padEnd(12)} ${c.action.padEnd(8)} ${c.certPath}  until ${c.notAfter.slice(0, 10)}  SAN ${names}${c.reason ? `  (replaced: ${c.reason})` : ''}${c.note ? `  (${c.note})` : ''}`,
    );
  }
  return lines.join('\n');
}
