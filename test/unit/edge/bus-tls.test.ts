import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { provisionFleetCertificates } from '../../../lib/tls/provision-fleet.js';
import { busTlsOptions } from '../../../edge/src/bus-tls.js';
import { parseEdgeArgs } from '../../../edge/src/edge-args.js';

describe('the device bus’s TLS settings (busTlsOptions)', () => {
  let dir: string;
  let dataRoot: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-edge-bus-tls-'));
    dataRoot = join(dir, 'cam-1');
    await provisionFleetCertificates({ caDir: join(dir, 'ca'), devices: [{ deviceId: 'cam-1', dataRoot, ips: [] }] });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('takes the provisioned fleet CA and device certificate for an mqtts:// broker', () => {
    const tls = busTlsOptions('mqtts://hub:8883', dataRoot, {});
    assert.match(String(tls?.ca), /BEGIN CERTIFICATE/);
    assert.match(String(tls?.cert), /BEGIN CERTIFICATE/);
    assert.match(String(tls?.key), /PRIVATE KEY/);
  });

  it('takes --mqtt-ca / LOOKOUT_MQTT_CA over the provisioned one, and says which file cannot be read', () => {
    const args = parseEdgeArgs(['--mqtt', 'mqtts://hub:8883'], { LOOKOUT_MQTT_CA: join(dir, 'ca', 'ca.crt') }, dir);
    assert.equal(args.mqttTls.ca, join(dir, 'ca', 'ca.crt'));
    assert.throws(() => busTlsOptions('mqtts://hub:8883', dataRoot, { ca: join(dir, 'missing.crt') }), /--mqtt-ca .*missing\.crt cannot be read: ENOENT/);
  });

  it('uses nothing with a plain broker, and refuses TLS files given for one', () => {
    assert.equal(busTlsOptions('mqtt://127.0.0.1:1883', dataRoot, {}), undefined);
    assert.throws(() => busTlsOptions('mqtt://127.0.0.1:1883', dataRoot, { ca: '/x.crt' }), /--mqtt-ca is for an mqtts:\/\/ broker/);
    assert.throws(() => busTlsOptions('mqtts://hub:8883', dataRoot, { cert: '/x.crt' }), /go together/);
  });
});
