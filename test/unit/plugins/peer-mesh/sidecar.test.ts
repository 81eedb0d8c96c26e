import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PeerHelloAckSchema } from '../../../../core/src/contracts/peer-mesh-status.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { checkSidecarMaterial, type SidecarMaterial } from '../../../../plugins/peer-mesh/src/sidecar-material.js';
import { SidecarServer } from '../../../../plugins/peer-mesh/src/sidecar-server.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../../support/fleet-certs.js';
import { waitFor } from '../../../support/hub-helpers.js';
import { sidecarRequest } from './sidecar-client.js';

/** A TCP connection that never starts its handshake (what an attacker holds open), from `localAddress`. */
function idleConnection(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    socket.on('error', () => undefined); // refused ones are reset; the test counts them on the server
    socket.once('connect', () => resolve(socket));
    socket.once('close', () => reject(new Error('closed before connecting')));
  });
}

describe('the mTLS sidecar', () => {
  let dir: string;
  let fleet: TestFleetCerts;
  let foreign: TestFleetCerts;
  let material: SidecarMaterial;
  let server: SidecarServer;
  let port: number;
  const device = () => fleet.device('cam-s');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sidecar-'));
    fleet = await provisionTestFleetCerts(join(dir, 'ca'), {
      devices: [{ id: 'cam-s', dataRoot: join(dir, 'cam-s'), ips: ['127.0.0.1'] }],
      hubDataDir: join(dir, 'hub'),
    });
    foreign = await provisionTestFleetCerts(join(dir, 'other-ca'), { devices: [{ id: 'intruder', dataRoot: join(dir, 'intruder') }] });
    const check = await checkSidecarMaterial(device());
    assert.ok(check.ok, check.ok ? '' : check.problem);
    material = check.material;
    server = new SidecarServer({
      host: '127.0.0.1',
      port: 0,
      material,
      log: createLogger({ level: 'silent' }),
      peerHello: (caller) => ({
        q: 'peer_hello',
        ack: true,
        device_id: 'cam-s',
        cert_fingerprint: device().fingerprint,
        peer_comm_status: 'ok',
        peers_up: 0,
        caller,
        received_at: new Date().toISOString(),
      }),
    });
    port = await server.listen();
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers peer_hello to a holder of a fleet-CA certificate, naming it by its CN', async () => {
    const hub = fleet.hub();
    const reply = await sidecarRequest({ host: '127.0.0.1', port, ca: fleet.caCertPem, cert: await readFile(hub.certPath), key: await readFile(hub.keyPath) });
    assert.equal(reply.status, 200);
    const ack = PeerHelloAckSchema.parse(reply.body);
    assert.equal(ack.caller, 'lookout-hub');
    assert.equal(ack.device_id, 'cam-s');
    assert.equal(server.stats.queries_answered, 1);
  });

  it('refuses a client without a certificate, and one of another CA, at the handshake, and counts both', async () => {
    const refused = server.stats.handshakes_refused;
    await assert.rejects(sidecarRequest({ host: '127.0.0.1', port, ca: fleet.caCertPem }));
    const intruder = foreign.device('intruder');
    await assert.rejects(
      sidecarRequest({ host: '127.0.0.1', port, ca: fleet.caCertPem, cert: await readFile(intruder.certPath), key: await readFile(intruder.keyPath) }),
    );
    assert.equal(server.stats.handshakes_refused, refused + 2);
    assert.equal(server.stats.queries_answered, 1, 'neither reached a handler');
  });

  it('answers other queries, paths, methods and oversized bodies with a JSON error of its own code', async () => {
    const hub = fleet.hub();
    const client = { host: '127.0.0.1', port, ca: fleet.caCertPem, cert: await readFile(hub.certPath), key: await readFile(hub.keyPath) };
    const cases: [string, string, string, number, string][] = [
      ['/peer/query?q=peer_goodbye', 'POST', '', 400, 'peer-mesh.query_unknown'],
      ['/peer/query', 'POST', '', 400, 'peer-mesh.query_unknown'],
      ['/peer/other?q=peer_hello', 'POST', '', 404, 'peer-mesh.route_unknown'],
      ['/peer/query?q=peer_hello', 'GET', '', 405, 'peer-mesh.method_not_allowed'],
      ['/peer/query?q=peer_hello', 'POST', 'x'.repeat(20_000), 413, 'peer-mesh.body_too_large'],
    ];
    for (const [path, method, body, status, code] of cases) {
      const reply = await sidecarRequest(client, path, method, body);
      assert.equal(reply.status, status, `${method} ${path}`);
      assert.equal((reply.body as { error: { code: string } }).error.code, code);
    }
  });

  it('idle connections from one address cannot starve it: past the pending cap the oldest are closed unread, another address is answered', async (t) => {
    const hub = fleet.hub();
    const idle: Socket[] = [];
    t.after(() => idle.forEach((s) => s.destroy()));
    const refusedBefore = server.stats.connections_refused;
    // More than the old total cap (64), all from 127.0.0.1, none ever starting a handshake.
    for (let i = 0; i < 80; i++) idle.push(await idleConnection(port, '127.0.0.1'));
    await waitFor('the idle connections over the pending cap closed', () => server.stats.connections_refused - refusedBefore >= 80 - 4);
    const reply = await sidecarRequest({
      host: '127.0.0.1',
      port,
      localAddress: '127.0.0.2',
      ca: fleet.caCertPem,
      cert: await readFile(hub.certPath),
      key: await readFile(hub.keyPath),
    });
    assert.equal(reply.status, 200);
    assert.equal(server.stats.connections_refused - refusedBefore, 80 - 4);
  });

  it('16 idle connections from one address do not keep out a real client from that address: the oldest pending ones give way, the rest time out', async (t) => {
    const quick = new SidecarServer({
      host: '127.0.0.1',
      port: 0,
      material,
      log: createLogger({ level: 'silent' }),
      peerHello: (caller) => ({
        q: 'peer_hello',
        ack: true,
        device_id: 'cam-s',
        cert_fingerprint: device().fingerprint,
        peer_comm_status: 'ok',
        peers_up: 0,
        caller,
        received_at: new Date().toISOString(),
      }),
      // A deadline far beyond the test: the real query must get through while all 16 are still held, not after they time out.
      limits: { handshakeTimeoutMs: 60_000 },
    });
    const quickPort = await quick.listen();
    const idle: Socket[] = [];
    t.after(async () => {
      idle.forEach((s) => s.destroy());
      await quick.close();
    });
    for (let i = 0; i < 16; i++) idle.push(await idleConnection(quickPort, '127.0.0.3'));
    const hub = fleet.hub();
    const reply = await sidecarRequest({
      host: '127.0.0.1',
      port: quickPort,
      localAddress: '127.0.0.3',
      ca: fleet.caCertPem,
      cert: await readFile(hub.certPath),
      key: await readFile(hub.keyPath),
    });
    assert.equal(reply.status, 200);
    assert.equal(PeerHelloAckSchema.parse(reply.body).caller, 'lookout-hub');
    // Every idle one was still open when it came, or closed to make room for a newer one: none timed out.
    assert.equal(quick.stats.handshakes_timed_out, 0);
    assert.ok(quick.stats.connections_refused >= 16 - 4 + 1 - 1);
  });

  it('closes idle connections that never start a handshake after the deadline, and counts them', async (t) => {
    const quick = new SidecarServer({
      host: '127.0.0.1',
      port: 0,
      material,
      log: createLogger({ level: 'silent' }),
      peerHello: () => assert.fail('no query gets through'),
      limits: { handshakeTimeoutMs: 300 },
    });
    const quickPort = await quick.listen();
    t.after(() => quick.close());
    const sockets = await Promise.all([1, 2, 3].map(() => idleConnection(quickPort, '127.0.0.4')));
    const closed = new Set<Socket>();
    for (const s of sockets) s.once('close', () => closed.add(s));
    await waitFor('the server to close the three silent connections', () => closed.size === 3, 10_000);
    await waitFor('the three timed out', () => quick.stats.handshakes_timed_out === 3);
  });

  it('closes a connection that does not finish its handshake in time, and counts it as refused', async (t) => {
    const quick = new SidecarServer({
      host: '127.0.0.1',
      port: 0,
      material,
      log: createLogger({ level: 'silent' }),
      peerHello: () => assert.fail('no query gets through'),
      limits: { handshakeTimeoutMs: 200 },
    });
    const quickPort = await quick.listen();
    t.after(() => quick.close());
    const socket = await idleConnection(quickPort, '127.0.0.1');
    let closed = false;
    socket.once('close', () => (closed = true));
    await waitFor('the server to close the silent connection', () => closed, 5000);
    await waitFor('the timed-out handshake counted', () => quick.stats.handshakes_refused === 1);
  });

  it('checks its material before listening: each refusal says what is wrong and where', async () => {
    const d = device();
    const intruder = foreign.device('intruder');
    const missingCa = await checkSidecarMaterial({ ...d, caPath: join(dir, 'nowhere', 'fleet_ca.crt') });
    assert.ok(!missingCa.ok);
    assert.match(missingCa.problem, /no fleet CA certificate at .*fleet_ca\.crt \(`lookout certs` writes it\)/);
    const otherCa = await checkSidecarMaterial({ ...intruder, caPath: d.caPath });
    assert.ok(!otherCa.ok);
    assert.match(otherCa.problem, /does not fit the fleet CA .*is not issued by this CA/);
    assert.equal(otherCa.caFingerprint, (await checkSidecarMaterial(d)).ok ? material.caFingerprint : null);
    const wrongKey = await checkSidecarMaterial({ ...d, keyPath: intruder.keyPath });
    assert.ok(!wrongKey.ok);
    assert.match(wrongKey.problem, /does not belong to the certificate/);
    const notCa = await checkSidecarMaterial({ ...d, caPath: d.certPath });
    assert.ok(!notCa.ok);
    assert.match(notCa.problem, /is not a CA/);
    const noCert = await checkSidecarMaterial({ ...d, certPath: join(dir, 'none.crt') });
    assert.ok(!noCert.ok);
    assert.match(noCert.problem, /no device certificate at/);
    const expired = await checkSidecarMaterial(d, new Date(Date.now() + 3 * 365 * 86_400_000));
    assert.ok(!expired.ok);
    assert.match(expired.problem, /not valid now|expired/);
    const garbage = join(dir, 'garbage.crt');
    await copyFile(d.keyPath, garbage);
    const notPem = await checkSidecarMaterial({ ...d, caPath: garbage });
    assert.ok(!notPem.ok);
    assert.match(notPem.problem, /is not a PEM certificate/);
  });
});
