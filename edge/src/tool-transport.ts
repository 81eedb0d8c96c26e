import { LookoutError } from 'lookout/core';
import { decideSurfaceTransport } from 'lookout/lib/tls';

/** How the tool server (and what shares its listener: recordings, /metrics) is asked to serve. */
export interface ToolTlsOptions {
  /** HTTPS on a loopback address too (beyond loopback it is the default). */
  tls?: boolean;
  /** Plain HTTP beyond loopback: the tool token and every answer cross the network in clear. Warned at start. */
  insecureHttp?: boolean;
}

export type ToolTransport =
  | { scheme: 'https'; certPath: string; keyPath: string }
  | {
      scheme: 'http';
      /** Listens beyond loopback in clear (only with `insecureHttp`): the start warns. */
      insecure: boolean;
    };

/**
 * Plain HTTP or HTTPS with the device certificate (`/data/config/shadow_peer.crt|.key`, what
 * `lookout certs --device` issues from the fleet CA), decided before any socket opens, as the hub
 * decides its own (hub/src/http/hub-transport.ts):
 *  - a loopback address: plain HTTP (tests, `npm start`), unless `tls` asks for HTTPS;
 *  - any other address (a LAN address, 0.0.0.0, ::): HTTPS; without a device certificate the start is
 *    refused (`config_invalid`, reason `tls_required`) unless `insecureHttp` says plain HTTP is meant.
 * The certificate must be there at start: the tool server opens before the identity plugin, which
 * generates only a self-signed one in development that the hub would refuse anyway.
 */
export function decideToolTransport(host: string, dataDir: string, deviceId: string, o: ToolTlsOptions): ToolTransport {
  if (o.insecureHttp && o.tls) {
    throw new LookoutError('config_invalid', '--insecure-tool-http asks for plain HTTP, --tool-tls for HTTPS: give one of them', {
      details: { key: '--insecure-tool-http', usage: true },
    });
  }
  const decided = decideSurfaceTransport(host, dataDir, o);
  if (decided.scheme !== 'missing') return decided;
  const { certPath } = decided;
  const issue = `lookout certs --ca-dir <fleet CA dir> --device ${deviceId} --data-root ${dataDir} --ip <its LAN address>`;
  throw new LookoutError(
    'config_invalid',
    `${o.tls ? '--tool-tls' : `--tool-host ${host} is beyond loopback, where the tool server serves HTTPS only (the tool token would cross the network in clear)`}: ` +
      `no device certificate at ${certPath}: issue it (${issue})${o.tls ? '' : ', or pass --insecure-tool-http to serve plain HTTP anyway'}`,
    { details: { key: o.tls ? '--tool-tls' : '--tool-host', value: host, reason: 'tls_required', looked_for: certPath } },
  );
}
