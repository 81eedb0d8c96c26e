import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { LookoutError } from 'lookout/core';
import { isLoopbackHost } from 'lookout/lib/net';
import { hubServerTlsPaths } from 'lookout/lib/tls';

/** How the hub serves HTTP, as asked by its options (`--tls-cert`, `--tls-key`, `--tls`, `--insecure-http`). */
export interface HubTlsOptions {
  /** PEM certificate (chain) to serve HTTPS with; needs `tlsKey`. Reloaded on SIGHUP and when the file changes. */
  tlsCert?: string;
  /** PEM private key of `tlsCert`. */
  tlsKey?: string;
  /**
   * HTTPS on a loopback address too, with `tlsCert`/`tlsKey` or else the fleet-CA hub server
   * certificate of the data dir (`lookout certs --hub-data`). Beyond loopback HTTPS is the default.
   */
  tls?: boolean;
  /** Plain HTTP beyond loopback: the bearer token and every answer cross the network in clear. Warned at start. */
  insecureHttp?: boolean;
}

export type HubTransport =
  | { scheme: 'https'; certPath: string; keyPath: string; source: 'flags' | 'fleet' }
  | {
      scheme: 'http';
      /** True when it listens beyond loopback (only with `insecureHttp`): the start warns. */
      insecure: boolean;
    };

const conflict = (message: string, key: string) => new LookoutError('config_invalid', message, { details: { key } });

/**
 * Plain HTTP or HTTPS, and with which certificate, decided before any socket opens:
 *  - `--tls-cert` and `--tls-key` (always together): HTTPS with them, on any address;
 *  - a loopback listen address (127.0.0.0/8, ::1, localhost): plain HTTP, unless `--tls` asks for
 *    HTTPS (then the given pair, else the fleet-CA hub server certificate in the data dir);
 *  - any other address: HTTPS with the fleet-CA hub server certificate of the data dir when it is
 *    there; without a certificate the start is refused (`config_invalid`, reason `tls_required`)
 *    unless `--insecure-http` says plain HTTP is meant.
 * The check is on the configured host string: a LAN address, 0.0.0.0 and :: are all beyond loopback.
 */
export function decideHubTransport(host: string, dataDir: string, o: HubTlsOptions): HubTransport {
  if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) {
    throw conflict('--tls-cert and --tls-key go together: the certificate and its private key', o.tlsCert === undefined ? '--tls-cert' : '--tls-key');
  }
  if (o.insecureHttp && (o.tlsCert !== undefined || o.tls)) {
    throw conflict('--insecure-http asks for plain HTTP, --tls/--tls-cert for HTTPS: give one of them', '--insecure-http');
  }
  if (o.tlsCert !== undefined && o.tlsKey !== undefined) {
    return { scheme: 'https', certPath: resolve(o.tlsCert), keyPath: resolve(o.tlsKey), source: 'flags' };
  }
  const loopback = isLoopbackHost(host);
  if (o.insecureHttp) return { scheme: 'http', insecure: !loopback };
  if (loopback && !o.tls) return { scheme: 'http', insecure: false };
  const fleet = hubServerTlsPaths(dataDir);
  if (existsSync(fleet.certPath) && existsSync(fleet.keyPath)) return { scheme: 'https', certPath: fleet.certPath, keyPath: fleet.keyPath, source: 'fleet' };
  const issue = `lookout certs --ca-dir <fleet CA dir> --hub-data ${resolve(dataDir)} --san <the hub's LAN name or address>`;
  if (o.tls) {
    throw new LookoutError('config_invalid', `--tls: no certificate: give --tls-cert and --tls-key, or issue the hub's from the fleet CA (${issue})`, {
      details: { key: '--tls', reason: 'tls_required', looked_for: fleet.certPath },
    });
  }
  throw new LookoutError(
    'config_invalid',
    `--host ${host} is beyond loopback, where the hub serves HTTPS only (the bearer token would cross the network in clear): ` +
      `issue its certificate (${issue}), give --tls-cert and --tls-key, or pass --insecure-http to serve plain HTTP anyway`,
    { details: { key: '--host', value: host, reason: 'tls_required', looked_for: fleet.certPath } },
  );
}
