import { existsSync } from 'node:fs';
import { isLoopbackHost } from 'lookout/lib/net';
import { deviceTlsPaths } from './tls-paths.js';

/** How a device surface (its tool server, its live stream) is asked to serve. */
export interface SurfaceTlsOptions {
  /** HTTPS on a loopback address too (beyond loopback it is the default). */
  tls?: boolean;
  /** Plain HTTP beyond loopback: credentials and answers cross the network in clear. */
  insecureHttp?: boolean;
}

export type SurfaceTransport =
  | { scheme: 'https'; certPath: string; keyPath: string }
  | {
      scheme: 'http';
      /** Listens beyond loopback in clear (only with `insecureHttp`): the start warns. */
      insecure: boolean;
    }
  /** TLS is required (beyond loopback, or asked) and the device certificate is not there: the caller refuses, naming `certPath`. */
  | { scheme: 'missing'; certPath: string };

/**
 * The one rule for every device surface that listens for the hub, decided before any socket opens:
 *  - a loopback address: plain HTTP, unless `tls` asks for HTTPS;
 *  - any other address (a LAN address, 0.0.0.0, ::): HTTPS with the device certificate
 *    (`/data/config/shadow_peer.crt|.key`, what `lookout certs --device` issues from the fleet CA),
 *    unless `insecureHttp` says plain HTTP is meant.
 * Both flags at once is the caller's usage error; here `insecureHttp` wins.
 */
export function decideSurfaceTransport(host: string, dataDir: string, o: SurfaceTlsOptions): SurfaceTransport {
  const loopback = isLoopbackHost(host);
  if (o.insecureHttp) return { scheme: 'http', insecure: !loopback };
  if (loopback && !o.tls) return { scheme: 'http', insecure: false };
  const { certPath, keyPath } = deviceTlsPaths(dataDir);
  if (existsSync(certPath) && existsSync(keyPath)) return { scheme: 'https', certPath, keyPath };
  return { scheme: 'missing', certPath };
}
