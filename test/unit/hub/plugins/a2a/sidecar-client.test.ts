import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { peerHelloOverMtls, type SidecarCall } from '../../../../../hub/plugins/a2a/src/sidecar-client.js';
import { sidecarAck, startTestSidecar, type SidecarBehaviour, type TestSidecar } from '../../../../support/a2a-helpers.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';

/** The hub's side of a peer query against a test double of a device sidecar (mTLS, fleet CA pinned). */
describe('peer_hello over mutual TLS to a sidecar', () => {
  let scratch: ScratchDir;
  let fleet: TestFleetCerts;
  let foreign: TestFleetCerts;
  let hubTls: SidecarCall['tls'];
  let behave: SidecarBehaviour | undefined;
  let sidecar: TestSidecar;
  let foreignSidecar: TestSidecar;
  before(async () => {
    scratch = await scratchDir('lookout-a2a-sidecar-');
    fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), {
      devices: [
        { id: 'cam-1', dataRoot: join(scratch.dir, 'cam-1') },
        { id: 'cam-2', dataRoot: join(scratch.dir, 'cam-2') },
      ],
      hubDataDir: join(scratch.dir, 'hub'),
    });
    foreign = await provisionTestFleetCerts(join(scratch.dir, 'foreign-ca'), { devices: [{ id: 'cam-1', dataRoot: join(scratch.dir, 'foreign-cam-1') }] });
    const hub = fleet.hub();
    hubTls = { key: await readFile(hub.keyPath), cert: await readFile(hub.certPath), ca: await readFile(hub.caPath) };
    sidecar = await startTestSidecar({ deviceId: 'cam-1', ...fleet.device('cam-1'), behave: (r) => behave?.(r) });
    foreignSidecar = await startTestSidecar({ deviceId: 'cam-1', ...foreign.device('cam-1') });
  });
  after(async () => {
    await sidecar.close();
    await foreignSidecar.close();
    await scratch.cleanup();
  });

  const call = (over: Partial<SidecarCall> = {}) =>
    peerHelloOverMtls({
      host: sidecar.host,
      port: sidecar.port,
      deviceId: 'cam-1',
      tls: hubTls,
      timeoutMs: 2000,
      signal: new AbortController().signal,
      ...over,
    });
  const failsWith = (code: string, pattern?: RegExp) => (e: unknown) =>
    isLookoutError(e, `a2a.${code}` as const) && (pattern === undefined || pattern.test(e.message));

  it("returns the device's acknowledgement, which names the hub as caller", async () => {
    behave = undefined;
    const ack = await call();
    assert.equal(ack.device_id, 'cam-1');
    assert.equal(ack.caller, 'lookout-hub');
    assert.equal(ack.ack, true);
  });

  it('says which certificate the sidecar presented over TLS, whatever its acknowledgement claims', async () => {
    const presented = new X509Certificate(await readFile(fleet.device('cam-1').certPath)).fingerprint256;
    behave = undefined;
    assert.equal((await call()).tls_fingerprint, presented);
    const claimed = Array.from({ length: 32 }, () => 'AB').join(':');
    behave = () => ({ status: 200, body: { ...sidecarAck('cam-1'), cert_fingerprint: claimed, tls_fingerprint: claimed } });
    const ack = await call();
    assert.equal(ack.cert_fingerprint, claimed, 'the device’s word, as it gave it');
    assert.equal(ack.tls_fingerprint, presented, 'a tls_fingerprint in the answer does not replace what the hub saw');
    behave = undefined;
  });

  it('refuses a sidecar whose certificate names another device, or comes from another CA', async () => {
    await assert.rejects(call({ deviceId: 'cam-2' }), failsWith('peer_unreachable', /names "cam-1", not cam-2/));
    await assert.rejects(call({ port: foreignSidecar.port }), failsWith('peer_unreachable'));
    assert.equal(foreignSidecar.callers.length, 0, 'the foreign sidecar answered nobody');
  });

  it('a sidecar error, non-JSON, an ack that is not one or from another device: each named', async () => {
    behave = () => ({ status: 400, body: { error: { code: 'peer-mesh.query_unknown', message: 'unknown' } } });
    await assert.rejects(
      call(),
      (e) =>
        failsWith('peer_refused', /refused the query with 400/)(e) &&
        (e as { details: { error: { code: string } } }).details.error.code === 'peer-mesh.query_unknown',
    );
    behave = () => ({ status: 200, body: '<html>' });
    await assert.rejects(call(), failsWith('peer_answer_invalid', /not JSON/));
    behave = () => ({ status: 200, body: { ...sidecarAck('cam-1'), ack: false } });
    await assert.rejects(call(), failsWith('peer_answer_invalid', /no peer_hello acknowledgement/));
    behave = () => ({ status: 200, body: sidecarAck('cam-9') });
    await assert.rejects(call(), failsWith('peer_answer_invalid', /answered as "cam-9"/));
    behave = () => ({ status: 200, body: { ...sidecarAck('cam-1'), padding: 'x'.repeat(70_000) } });
    await assert.rejects(call(), failsWith('peer_unreachable', /exceeds 65536 bytes/));
  });

  it('a sidecar that does not answer in time: peer_timeout; a caller that goes away cancels the query', async () => {
    behave = () => 'hang';
    await assert.rejects(call({ timeoutMs: 150 }), failsWith('peer_timeout', /within 150 ms/));
    const aborter = new AbortController();
    setTimeout(() => aborter.abort(), 100);
    await assert.rejects(call({ signal: aborter.signal }), failsWith('peer_unreachable', /cancelled/));
  });

  it('nothing listening, or something that is not TLS: peer_unreachable with the reason', async () => {
    const plain: Server = createServer((s) => {
      s.resume();
      s.end('SSH-2.0-not-tls\r\n');
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const port = (plain.address() as { port: number }).port;
    try {
      await assert.rejects(call({ port }), failsWith('peer_unreachable'));
    } finally {
      await new Promise((resolve) => plain.close(resolve));
    }
    await assert.rejects(call({ port }), (e) => failsWith('peer_unreachable')(e) && (e as { details: { reason: string } }).details.reason === 'ECONNREFUSED');
  });
});
