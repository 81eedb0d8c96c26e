import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { LookoutError } from 'lookout/core';
import { isLoopbackHost } from 'lookout/lib/net';
import { hubServerTlsPaths, hubTlsPaths } from 'lookout/lib/tls';
import type { HubTransport } from '../http/hub-transport.js';

export const DEFAULT_BROKER_TLS_PORT = 8883;

/** How the embedded broker listens, as asked by the hub's options. */
export interface BrokerTlsOptions {
  /** PEM certificate (chain) for the broker's TLS listener, with `brokerTlsKey`; default the hub's HTTPS certificate. */
  brokerTlsCert?: string;
  brokerTlsKey?: string;
  /** The TLS listener's port; default 8883, 0 picks a free one. */
  brokerTlsPort?: number;
  /** Plain MQTT beyond loopback: every device password and message crosses the network in clear. Warned at start. */
  insecureMqtt?: boolean;
  /** From accept to a finished TLS handshake on the broker's TLS listener (default 10 000 ms). */
  brokerTlsHandshakeTimeoutMs?: number;
}

export interface BrokerListeners {
  /** Where plain MQTT listens: the broker host when it is loopback (or with insecureMqtt), else 127.0.0.1. */
  plainHost: string;
  /** True when plain MQTT listens beyond loopback (only with insecureMqtt): the start warns. */
  insecure: boolean;
  /** The TLS listener, when there is one. */
  tls?: { host: string; port: number; certPath: string; keyPath: string; source: 'flags' | 'hub-https' | 'fleet'; clientCaPath?: string };
}

const conflict = (message: string, key: string) => new LookoutError('config_invalid', message, { details: { key } });

/**
 * The embedded broker's listeners, decided before any socket opens:
 *  - a loopback broker host: plain MQTT there, as always; a TLS listener beside it only when
 *    `--broker-tls-cert`/`--broker-tls-key` are given;
 *  - any other host (a LAN address, 0.0.0.0, ::): MQTT over TLS there on 8883, with the broker's own
 *    pair, else the certificate the hub serves HTTPS with, else the fleet-CA hub server certificate
 *    of the data dir; plain MQTT stays on 127.0.0.1 (the hub's own client). Without a certificate
 *    the start is refused (`config_invalid`, reason `tls_required`) unless `--insecure-mqtt` says
 *    plain MQTT beyond loopback is meant (then no TLS listener).
 * With the fleet CA in the data dir (`<dir>/tls/fleet_ca.crt`), the TLS listener takes a device by
 * its fleet certificate instead of a password (embedded-broker.ts).
 */
export function decideBrokerListeners(brokerHost: string, dataDir: string, hub: HubTransport, o: BrokerTlsOptions): BrokerListeners {
  const decided = listeners(brokerHost, dataDir, hub, o);
  // The fleet CA beside the hub's certificates (lookout certs --hub-data): a device may authenticate by its fleet certificate.
  const fleetCa = hubTlsPaths(dataDir).caPath;
  if (decided.tls && existsSync(fleetCa)) decided.tls.clientCaPath = fleetCa;
  return decided;
}

function listeners(brokerHost: string, dataDir: string, hub: HubTransport, o: BrokerTlsOptions): BrokerListeners {
  if ((o.brokerTlsCert === undefined) !== (o.brokerTlsKey === undefined)) {
    throw conflict(
      '--broker-tls-cert and --broker-tls-key go together: the certificate and its private key',
      o.brokerTlsCert === undefined ? '--broker-tls-cert' : '--broker-tls-key',
    );
  }
  if (o.insecureMqtt && o.brokerTlsCert !== undefined) {
    throw conflict('--insecure-mqtt asks for plain MQTT, --broker-tls-cert for TLS: give one of them', '--insecure-mqtt');
  }
  const port = o.brokerTlsPort ?? DEFAULT_BROKER_TLS_PORT;
  const loopback = isLoopbackHost(brokerHost);
  if (o.brokerTlsCert !== undefined && o.brokerTlsKey !== undefined) {
    const tls = { host: brokerHost, port, certPath: resolve(o.brokerTlsCert), keyPath: resolve(o.brokerTlsKey), source: 'flags' as const };
    return { plainHost: loopback ? brokerHost : '127.0.0.1', insecure: false, tls };
  }
  if (loopback) return { plainHost: brokerHost, insecure: false };
  if (o.insecureMqtt) return { plainHost: brokerHost, insecure: true };
  if (hub.scheme === 'https') {
    return { plainHost: '127.0.0.1', insecure: false, tls: { host: brokerHost, port, certPath: hub.certPath, keyPath: hub.keyPath, source: 'hub-https' } };
  }
  const fleet = hubServerTlsPaths(dataDir);
  if (existsSync(fleet.certPath) && existsSync(fleet.keyPath)) {
    return { plainHost: '127.0.0.1', insecure: false, tls: { host: brokerHost, port, certPath: fleet.certPath, keyPath: fleet.keyPath, source: 'fleet' } };
  }
  throw new LookoutError(
    'config_invalid',
    `--broker-host ${brokerHost} is beyond loopback, where the embedded broker speaks MQTT over TLS only (device passwords would cross the network in clear): ` +
      `issue the hub's certificate (lookout certs --ca-dir <fleet CA dir> --hub-data ${resolve(dataDir)} --san <the hub's LAN name or address>), ` +
      'give --broker-tls-cert and --broker-tls-key, or pass --insecure-mqtt to serve plain MQTT anyway',
    { details: { key: '--broker-host', value: brokerHost, reason: 'tls_required', looked_for: fleet.certPath } },
  );
}
