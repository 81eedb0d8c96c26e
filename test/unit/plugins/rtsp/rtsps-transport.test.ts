/** Where RTSPS listens beside RTSP: the device surfaces' rule, with plain RTSP kept whatever it decides. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { deviceTlsPaths } from '../../../../lib/tls/tls-paths.js';
import { decideRtspsTransport } from '../../../../plugins/rtsp/src/rtsps-transport.js';
import { provisionTestFleetCerts } from '../../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';

let scratch: ScratchDir;
let withCert: string;
let bare: string;
before(async () => {
  scratch = await scratchDir('lookout-rtsps-transport-');
  withCert = join(scratch.dir, 'cam-1');
  bare = join(scratch.dir, 'bare');
  await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-1', dataRoot: withCert }] });
});
after(() => scratch?.cleanup());

test('auto: RTSPS beyond loopback with the device certificate; none on loopback; missing without a certificate', () => {
  const paths = deviceTlsPaths(withCert);
  for (const host of ['0.0.0.0', '::', '10.200.0.1']) {
    assert.deepEqual(decideRtspsTransport(host, withCert, 'auto'), { scheme: 'https', certPath: paths.certPath, keyPath: paths.keyPath });
  }
  assert.deepEqual(decideRtspsTransport('127.0.0.1', withCert, 'auto'), { scheme: 'none' });
  assert.deepEqual(decideRtspsTransport('0.0.0.0', bare, 'auto'), { scheme: 'missing', certPath: deviceTlsPaths(bare).certPath });
});

test('on: RTSPS on loopback too (missing without a certificate); off: never, whatever the address', () => {
  const paths = deviceTlsPaths(withCert);
  assert.deepEqual(decideRtspsTransport('127.0.0.1', withCert, 'on'), { scheme: 'https', certPath: paths.certPath, keyPath: paths.keyPath });
  assert.deepEqual(decideRtspsTransport('127.0.0.1', bare, 'on'), { scheme: 'missing', certPath: deviceTlsPaths(bare).certPath });
  for (const host of ['127.0.0.1', '0.0.0.0']) assert.deepEqual(decideRtspsTransport(host, withCert, 'off'), { scheme: 'none' });
});
