import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { MqttTlsOptions } from 'lookout/lib/mqtt';
import { deviceTlsPaths } from 'lookout/lib/tls';
import { usageError } from './edge-args.js';

/** The device's TLS files for the bus, as given by flags or the environment (paths, not contents). */
export interface BusTlsFiles {
  /** PEM CA the broker's certificate must chain to. */
  ca?: string;
  /** A client certificate and its key, presented when the broker asks for one. */
  cert?: string;
  key?: string;
}

const TLS_URL = /^(mqtts|ssl|tls|wss):\/\//i;

/**
 * The TLS settings of the device's bus. Only for an `mqtts://` broker: the CA is `--mqtt-ca`
 * (LOOKOUT_MQTT_CA), else the fleet CA provisioning put under the data root
 * (/data/config/fleet_ca.crt, `lookout certs`), else Node's trusted CAs; the client certificate is
 * `--mqtt-cert`/`--mqtt-key`, else the device's fleet certificate (shadow_peer.crt|.key) when
 * present, so that a broker asking for one (mosquitto's require_certificate) gets it. A file given
 * but unreadable, or TLS files with a plain `mqtt://` broker, is a usage error naming it.
 */
export function busTlsOptions(mqttUrl: string, dataRoot: string, files: BusTlsFiles): MqttTlsOptions | undefined {
  if (!TLS_URL.test(mqttUrl)) {
    const given = (['ca', 'cert', 'key'] as const).find((k) => files[k] !== undefined);
    if (given) throw usageError(`--mqtt-${given} is for an mqtts:// broker; --mqtt is a plain one`);
    return undefined;
  }
  if ((files.cert === undefined) !== (files.key === undefined)) throw usageError('--mqtt-cert and --mqtt-key go together');
  const fleet = deviceTlsPaths(dataRoot);
  const ca = files.ca ?? (existsSync(fleet.caPath) ? fleet.caPath : undefined);
  const pair =
    files.cert !== undefined
      ? { cert: files.cert, key: files.key! }
      : existsSync(fleet.certPath) && existsSync(fleet.keyPath)
        ? { cert: fleet.certPath, key: fleet.keyPath }
        : undefined;
  return {
    ...(ca !== undefined ? { ca: read(ca, 'ca') } : {}),
    ...(pair ? { cert: read(pair.cert, 'cert'), key: read(pair.key, 'key') } : {}),
  };
}

function read(path: string, what: 'ca' | 'cert' | 'key'): Buffer {
  try {
    return readFileSync(resolve(path));
  } catch (err) {
    throw usageError(`--mqtt-${what} ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
