import { rootCertificates } from 'node:tls';
import { readFile } from 'node:fs/promises';
import { LookoutError } from 'lookout/core';
import { readIfThere } from 'lookout/lib/tls';

/** The CAs the hub's connections to an external `mqtts://` broker verify it with (its bus, the replicas' ingest and session adoption). */
export interface BrokerTrust {
  ca: string[];
}

/**
 * `--mqtt-ca <file>`: that file's CAs only. Without it: Node's public roots and, when the hub has it,
 * the fleet CA (`<data dir>/tls/fleet_ca.crt`, from `lookout certs --hub-data`), so that a mosquitto
 * serving a certificate of the fleet CA (`lookout broker-acl --conf` with TLS) and one with a public
 * certificate both verify without a flag.
 */
export async function brokerTrust(mqttCaPath: string | undefined, fleetCaPath: string): Promise<BrokerTrust> {
  if (mqttCaPath !== undefined) {
    const pem = await readFile(mqttCaPath, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new LookoutError('config_invalid', `--mqtt-ca ${mqttCaPath}: ${err.code ?? err.message}`, { details: { key: '--mqtt-ca' } });
    });
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new LookoutError('config_invalid', `--mqtt-ca ${mqttCaPath}: no PEM certificate in it`, { details: { key: '--mqtt-ca' } });
    }
    return { ca: [pem] };
  }
  const fleet = await readIfThere(fleetCaPath);
  return { ca: fleet ? [...rootCertificates, fleet] : [...rootCertificates] };
}
