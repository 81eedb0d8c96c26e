import assert from 'node:assert/strict';
import { request } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deviceToolToken } from '../../../lib/auth/tool-token.js';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { LookoutError } from '../../../core/src/errors/lookout-error.js';
import { importPlugin } from '../../../core/src/images/load-image.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { deviceTlsPaths } from '../../../lib/tls/tls-paths.js';
import { startDevice } from '../../../edge/src/device-runtime.js';
import { decideToolTransport } from '../../../edge/src/tool-transport.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';

const SECRET = 'tool-transport-test-fleet-secret-0a1b';

describe('decideToolTransport: plain HTTP on loopback, HTTPS with the device certificate beyond it', () => {
  let scratch: ScratchDir;
  let provisioned: string;
  let bare: string;
  before(async () => {
    scratch = await scratchDir('lookout-tool-transport-');
    provisioned = join(scratch.dir, 'cam-1');
    bare = join(scratch.dir, 'bare');
    await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-1', dataRoot: provisioned }] });
  });
  after(() => scratch?.cleanup());

  it('loopback stays plain unless --tool-tls asks', () => {
    for (const host of ['127.0.0.1', '127.0.0.9', '::1', 'localhost'])
      assert.deepEqual(decideToolTransport(host, bare, 'cam-1', {}), { scheme: 'http', insecure: false });
    assert.deepEqual(decideToolTransport('127.0.0.1', provisioned, 'cam-1', { tls: true }), { scheme: 'https', ...certOf(provisioned) });
  });

  it('beyond loopback: HTTPS with the provisioned certificate', () => {
    for (const host of ['0.0.0.0', '::', '10.200.0.1'])
      assert.deepEqual(decideToolTransport(host, provisioned, 'cam-1', {}), { scheme: 'https', ...certOf(provisioned) });
  });

  it('beyond loopback without a certificate: refused (tls_required), naming the command that issues it and the flag that allows plain HTTP', () => {
    assert.throws(
      () => decideToolTransport('0.0.0.0', bare, 'cam-1', {}),
      (err: LookoutError) => {
        assert.equal(err.code, 'config_invalid');
        assert.equal((err.details as { reason: string }).reason, 'tls_required');
        assert.match(err.message, /lookout certs --ca-dir <fleet CA dir> --device cam-1/);
        assert.match(err.message, /--insecure-tool-http/);
        return true;
      },
    );
    assert.throws(() => decideToolTransport('127.0.0.1', bare, 'cam-1', { tls: true }), /--tool-tls: no device certificate/);
  });

  it('--insecure-tool-http: plain beyond loopback, marked insecure; with --tool-tls it is a conflict', () => {
    assert.deepEqual(decideToolTransport('0.0.0.0', provisioned, 'cam-1', { insecureHttp: true }), { scheme: 'http', insecure: true });
    assert.deepEqual(decideToolTransport('127.0.0.1', bare, 'cam-1', { insecureHttp: true }), { scheme: 'http', insecure: false });
    assert.throws(() => decideToolTransport('0.0.0.0', provisioned, 'cam-1', { insecureHttp: true, tls: true }), /give one of them/);
  });
});

describe('a device on 0.0.0.0 (traffic only to 127.0.0.1)', () => {
  let scratch: ScratchDir;
  let certs: TestFleetCerts;
  const lines: string[] = [];
  const logger = createLogger({ level: 'warn', destination: { write: (line: string) => lines.push(line) } });
  const start = async (deviceId: string, dataDir: string, toolTls: { insecureHttp?: boolean } = {}) =>
    startDevice({
      deviceId,
      image: { name: 'bare', role: 'camera', plugins: [await importPlugin('identity', packageRoot())] },
      layer: 'layer0',
      dataDir,
      bus: new MemoryBus(),
      toolHost: '0.0.0.0',
      toolPort: 0,
      toolToken: deviceToolToken(SECRET, deviceId),
      toolTls,
      env: { IDENTITY_CERT_GENERATE: '0' },
      logger,
    });
  before(async () => {
    scratch = await scratchDir('lookout-tool-wide-');
    certs = await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-1', dataRoot: join(scratch.dir, 'cam-1') }] });
  });
  after(() => scratch?.cleanup());

  it('without a device certificate the start is refused: no plain HTTP beyond loopback by default', async () => {
    await assert.rejects(
      start('cam-0', join(scratch.dir, 'cam-0')),
      (err: LookoutError) => err.code === 'config_invalid' && /tls_required/.test(JSON.stringify(err.details)),
    );
  });

  it('with its certificate it serves HTTPS that a client trusting the fleet CA verifies, the token still required', async () => {
    const device = await start('cam-1', join(scratch.dir, 'cam-1'));
    try {
      assert.match(device.toolUrl!, /^https:\/\/127\.0\.0\.1:/);
      const port = Number(new URL(device.toolUrl!).port);
      // The loopback caller needs no token; TLS is verified against the fleet CA, the certificate naming cam-1.
      const answer = await new Promise<{ status: number; fingerprint: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/metrics', ca: certs.caCertPem, servername: 'cam-1' }, (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, fingerprint: (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256 });
        });
        req.once('error', reject);
        req.end();
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.fingerprint, certs.device('cam-1').fingerprint);
    } finally {
      await device.stop();
    }
  });

  it('--insecure-tool-http serves plain HTTP there and warns at start', async () => {
    const device = await start('cam-2', join(scratch.dir, 'cam-2'), { insecureHttp: true });
    try {
      assert.match(device.toolUrl!, /^http:\/\//);
      assert.ok(
        lines.some((l) => l.includes('plain HTTP (--insecure-tool-http)')),
        lines.join(''),
      );
    } finally {
      await device.stop();
    }
  });
});

function certOf(root: string): { certPath: string; keyPath: string } {
  const { certPath, keyPath } = deviceTlsPaths(root);
  return { certPath, keyPath };
}
