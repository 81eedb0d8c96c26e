import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, createServer, type Server, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';
import { waitFor } from '../../../support/wait-for.js';

/**
 * The material works with node:tls as the sidecar uses it (TLS 1.3, client certificate required,
 * the fleet CA pinned): the hub's certificate gets in, one of another CA and none are refused.
 */
describe('fleet certificates in a real mutual-TLS handshake', () => {
  let scratch: ScratchDir;
  let fleet: TestFleetCerts;
  let foreign: TestFleetCerts;
  let server: Server;
  let port: number;
  const refusals: string[] = [];
  const accepted: string[] = [];
  before(async () => {
    scratch = await scratchDir('lookout-mtls-');
    fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), {
      devices: [{ id: 'cam-1', dataRoot: join(scratch.dir, 'cam-1'), ips: ['127.0.0.1'] }],
      hubDataDir: join(scratch.dir, 'hub'),
    });
    foreign = await provisionTestFleetCerts(join(scratch.dir, 'foreign-ca'), { hubDataDir: join(scratch.dir, 'foreign-hub') });
    const device = fleet.device('cam-1');
    server = createServer({
      key: await readFile(device.keyPath),
      cert: await readFile(device.certPath),
      ca: await readFile(device.caPath),
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.3',
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      accepted.push(String(socket.getPeerCertificate().subject.CN));
      socket.end(`hello ${accepted.at(-1)}`);
    });
    // In TLS 1.3 the client may see only an early end; the server says why it refused.
    server.on('tlsClientError', (err) => refusals.push(err.message));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await scratch.cleanup();
  });

  /**
   * What the server sent, or the error. In TLS 1.3 the server checks the client's certificate after
   * the client's side of the handshake is done, so a refused client sees an alert or an early end.
   */
  const dial = async (tls: { key?: Buffer; cert?: Buffer }, ca: string): Promise<{ text: string; error?: string }> =>
    new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, ...tls, ca, servername: 'cam-1', minVersion: 'TLSv1.3' });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (text += d));
      socket.on('end', () => resolve({ text }));
      socket.on('error', (err) => resolve({ text, error: err.message }));
    });

  it('the hub certificate is accepted and names lookout-hub; the device is verified as cam-1 by the pinned CA', async () => {
    const hub = fleet.hub();
    assert.deepEqual(await dial({ key: await readFile(hub.keyPath), cert: await readFile(hub.certPath) }, fleet.caCertPem), { text: 'hello lookout-hub' });
  });

  it('a client of another CA and a client without a certificate are refused', async () => {
    const other = foreign.hub();
    refusals.length = 0;
    accepted.length = 0;
    const foreignClient = await dial({ key: await readFile(other.keyPath), cert: await readFile(other.certPath) }, fleet.caCertPem);
    assert.equal(foreignClient.text, '', 'no answer for a certificate of another CA');
    // The server drops it during the handshake (node reports that as a hang-up on its side).
    await waitFor(() => refusals.length === 1, 'the server to refuse the foreign certificate');
    const anonymous = await dial({}, fleet.caCertPem);
    assert.equal(anonymous.text, '', 'no answer without a certificate');
    await waitFor(() => refusals.length === 2, 'the server to refuse the client without a certificate');
    assert.match(refusals[1], /peer did not return a certificate/);
    assert.deepEqual(accepted, [], 'neither reached a secure connection');
  });

  it('a client that pins another CA does not accept the device', async () => {
    const hub = fleet.hub();
    const outcome = await dial({ key: await readFile(hub.keyPath), cert: await readFile(hub.certPath) }, foreign.caCertPem);
    assert.equal(outcome.text, '');
    assert.match(outcome.error ?? '', /unable to (get|verify)|self.signed|certificate/i);
  });
});
