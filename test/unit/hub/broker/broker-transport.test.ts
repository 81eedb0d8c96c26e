import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { hubServerTlsPaths } from '../../../../lib/tls/tls-paths.js';
import { decideBrokerListeners } from '../../../../hub/src/broker/broker-transport.js';

const http = { scheme: 'http', insecure: false } as const;

describe('the embedded broker’s listeners (decideBrokerListeners)', () => {
  let empty: string;
  let withCert: string;
  before(async () => {
    empty = await mkdtemp(join(tmpdir(), 'lookout-broker-transport-'));
    withCert = join(empty, 'with-cert');
    const paths = hubServerTlsPaths(withCert);
    await mkdir(join(withCert, 'tls'), { recursive: true });
    await writeFile(paths.certPath, 'cert');
    await writeFile(paths.keyPath, 'key');
  });
  after(() => rm(empty, { recursive: true, force: true }));

  it('keeps plain MQTT alone on a loopback host, as tests and npm start use it', () => {
    assert.deepEqual(decideBrokerListeners('127.0.0.1', withCert, http, {}), { plainHost: '127.0.0.1', insecure: false });
  });

  it('beyond loopback: TLS there with the fleet hub server certificate, plain MQTT on 127.0.0.1', () => {
    const paths = hubServerTlsPaths(withCert);
    assert.deepEqual(decideBrokerListeners('0.0.0.0', withCert, http, {}), {
      plainHost: '127.0.0.1',
      insecure: false,
      tls: { host: '0.0.0.0', port: 8883, certPath: paths.certPath, keyPath: paths.keyPath, source: 'fleet' },
    });
  });

  it('reuses the certificate the hub serves HTTPS with, and the broker’s own pair before it', () => {
    const hub = { scheme: 'https', certPath: '/h.crt', keyPath: '/h.key', source: 'flags' } as const;
    assert.equal(decideBrokerListeners('10.0.0.5', empty, hub, { brokerTlsPort: 0 }).tls?.certPath, '/h.crt');
    const own = decideBrokerListeners('10.0.0.5', empty, hub, { brokerTlsCert: '/b.crt', brokerTlsKey: '/b.key' });
    assert.deepEqual([own.plainHost, own.tls?.certPath, own.tls?.source], ['127.0.0.1', '/b.crt', 'flags']);
    // Given on loopback, the pair adds a TLS listener there.
    assert.equal(decideBrokerListeners('127.0.0.1', empty, http, { brokerTlsCert: '/b.crt', brokerTlsKey: '/b.key' }).tls?.host, '127.0.0.1');
  });

  it('refuses beyond loopback without a certificate (tls_required), unless --insecure-mqtt', () => {
    assert.throws(
      () => decideBrokerListeners('0.0.0.0', empty, http, {}),
      (err: LookoutError) => err.code === 'config_invalid' && (err.details as { reason: string }).reason === 'tls_required',
    );
    assert.deepEqual(decideBrokerListeners('0.0.0.0', empty, http, { insecureMqtt: true }), { plainHost: '0.0.0.0', insecure: true });
  });

  it('refuses a certificate without its key, and --insecure-mqtt with a certificate', () => {
    assert.throws(() => decideBrokerListeners('0.0.0.0', empty, http, { brokerTlsCert: '/b.crt' }), /go together/);
    assert.throws(
      () => decideBrokerListeners('0.0.0.0', empty, http, { brokerTlsCert: '/b.crt', brokerTlsKey: '/b.key', insecureMqtt: true }),
      /give one of them/,
    );
  });
});
