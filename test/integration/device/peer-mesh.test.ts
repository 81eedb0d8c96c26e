/**
 * The peer mesh between real `lookout-edge` processes on one machine: three devices listening on
 * 127.0.0.2, .3 and .4 (`--tool-host`) on an embedded broker that enforces the bus ACL find each
 * other from their hello and form a mesh (every peer up, round trips measured); a fourth without a
 * fleet certificate does not mesh and says why; forged, replayed, stale, malformed and misaddressed
 * datagrams from a raw socket are dropped and counted; a hello claiming another device's id, or
 * announcing no usable address, is refused and counted; each sidecar refuses clients without a
 * fleet-CA certificate and answers peer_hello to those with one. And the mesh's trust is per device
 * (issue 25): cam-9, an attacker holding valid credentials of its own (bus identity, fleet
 * certificate, the fleet mesh key), cannot speak as another device, cannot fill a table with ids
 * nobody vouched for, is dropped once it falls silent, and cannot multiply its rate with source ports.
 * Nothing is sent beyond loopback, and no broadcast or multicast.
 */
import assert from 'node:assert/strict';
import { createHmac, X509Certificate } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { deviceBusCredentials } from '../../../lib/auth/device-bus-credentials.js';
import { PeerHelloAckSchema, PeerMeshStatusSchema, type PeerMeshStatus } from '../../../core/src/contracts/peer-mesh-status.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { encodeIntroduction, encodeSealed, SEALED_MAGIC, type MeshMessage } from '../../../plugins/peer-mesh/src/datagram.js';
import { MeshIdentity } from '../../../plugins/peer-mesh/src/mesh-identity.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../support/fleet-certs.js';
import { sidecarRequest } from '../../unit/plugins/peer-mesh/sidecar-client.js';
import { endClient, mqttClient, publish, waitFor } from '../../support/hub-helpers.js';

const FLEET_SECRET = 'peer-mesh-test-fleet-secret-41c2';
const MESH_KEY = 'peer-mesh-test-mesh-key-5be81f0a';
const WRONG_KEY = 'a-mesh-key-of-some-other-fleet-0';
const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'mesh-camera.json');
/** Short intervals: up within a few heartbeats, suspect after 3, down after 5. */
const MESH_ENV = { MESH_HEARTBEAT_MS: '200', MESH_DROP_MS: '4000', HEALTH_INTERVAL_MS: '60000', STATUS_INTERVAL_MS: '60000' };

/** Protocol 1 as every device could sign it: `LKM1`, HMAC-SHA256 under the fleet mesh key, JSON (what cam-9 sent in issue 25). */
function protocol1(m: Record<string, unknown>, key = MESH_KEY): Buffer {
  const json = Buffer.from(JSON.stringify(m));
  return Buffer.concat([Buffer.from('LKM1'), createHmac('sha256', key).update(json).digest(), json]);
}

interface Member {
  id: string;
  host: string;
  dataRoot: string;
  process: DeviceProcess;
  client: Client;
}

async function status(m: Member): Promise<PeerMeshStatus> {
  const r = await m.client.callTool({ name: 'get_peer_mesh_status', arguments: {} });
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  const text = (r.content as { type: string; text: string }[])[0].text;
  return PeerMeshStatusSchema.parse(r.structuredContent ?? JSON.parse(text));
}

describe('peer mesh of lookout-edge processes on 127.0.0.x', () => {
  let dir: string;
  let broker: EmbeddedBroker;
  let fleet: TestFleetCerts;
  let foreign: TestFleetCerts;
  const members: Member[] = [];
  let rogue: Member | undefined;
  let raw: Socket;

  /** A device's mesh identity from its provisioned files (what that device, or an attacker holding its credentials, has). */
  async function identityOf(id: string): Promise<MeshIdentity> {
    const d = fleet.device(id);
    return new MeshIdentity(id, { cert: await readFile(d.certPath), key: await readFile(d.keyPath), ca: Buffer.from(fleet.caCertPem) });
  }

  async function startMember(id: string, host: string, meshKey: string, extraEnv: Record<string, string> = {}): Promise<Member> {
    const dataRoot = join(dir, id);
    const creds = deviceBusCredentials(FLEET_SECRET, id);
    const process = await startDeviceProcess({
      deviceId: id,
      mqtt: broker.url,
      image: IMAGE,
      layer: 'layer0',
      dataDir: dataRoot,
      extraArgs: ['--tool-host', host],
      env: { ...MESH_ENV, MESH_KEY: meshKey, LOOKOUT_MQTT_USERNAME: creds.username, LOOKOUT_MQTT_PASSWORD: creds.password, ...extraEnv },
    });
    const client = new Client({ name: 'peer-mesh-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(process.ready.tool_url!)));
    return { id, host, dataRoot, process, client };
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-mesh-'));
    broker = await EmbeddedBroker.start({ port: 0, auth: { fleetSecret: FLEET_SECRET } });
    const devices = [
      { id: 'mesh-a', host: '127.0.0.2' },
      { id: 'mesh-b', host: '127.0.0.3' },
      { id: 'mesh-c', host: '127.0.0.4' },
    ];
    // As `lookout certs` would: the fleet CA, each device's certificate under its data root, the hub's for the client side.
    fleet = await provisionTestFleetCerts(join(dir, 'ca'), {
      // cam-9 is never started: the attacker, holding its certificate (and its bus identity, and the mesh key).
      devices: [...devices, { id: 'cam-9', host: '127.0.0.9' }].map((d) => ({ id: d.id, dataRoot: join(dir, d.id), ips: [d.host] })),
      hubDataDir: join(dir, 'hub'),
    });
    foreign = await provisionTestFleetCerts(join(dir, 'other-ca'), { devices: [{ id: 'intruder', dataRoot: join(dir, 'intruder'), ips: ['127.0.0.9'] }] });
    members.push(...(await Promise.all(devices.map((d) => startMember(d.id, d.host, MESH_KEY)))));
    raw = createSocket('udp4');
    await new Promise<void>((resolve) => raw.bind(0, '127.0.0.9', resolve));
  });

  after(async () => {
    raw?.close();
    for (const m of [...members, ...(rogue ? [rogue] : [])]) await m.client.close().catch(() => undefined);
    await Promise.all([...members, ...(rogue ? [rogue] : [])].map((m) => m.process.stop()));
    await broker?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('three devices form a mesh from each other’s hello: every peer up at its 127.0.0.x address, round trips measured, sidecars serving', async () => {
    for (const m of members) {
      const others = members.filter((o) => o !== m);
      const s = await waitFor(
        `${m.id} to see its two peers up with a round trip`,
        async () => {
          const s = await status(m);
          return s.peers_up === 2 && s.peers.every((p) => p.rtt_ms !== null) && s.peer_comm_status === 'ok' ? s : undefined;
        },
        20_000,
        100,
      );
      assert.deepEqual(s.peers.map((p) => p.device_id).sort(), others.map((o) => o.id).sort());
      for (const o of others) {
        const p = s.peers.find((x) => x.device_id === o.id)!;
        assert.equal(p.address, o.host, `${m.id} reaches ${o.id} at its listen address`);
        assert.equal(p.mesh_port, o.process.ready.ports.mesh);
        assert.equal(p.sidecar_port, o.process.ready.ports.sidecar);
        assert.equal(p.state, 'up');
        assert.ok(p.rtt_ms! >= 0 && p.last_seen_at);
      }
      assert.equal(s.device_id, m.id);
      assert.equal(s.mesh_key_present, true);
      assert.deepEqual(s.listen_ports, { mesh: m.process.ready.ports.mesh, sidecar: m.process.ready.ports.sidecar });
      assert.equal(s.sidecar.listening, true);
      assert.equal(s.sidecar.ca_fingerprint, fleet.report.ca.fingerprint);
      assert.equal(s.counters.dropped_bad_signature, 0);
      assert.ok(s.counters.accepted > 0 && s.counters.sent > 0);
      assert.equal(s.reason, null);
      // The key is never shown, never logged.
      assert.ok(!JSON.stringify(s).includes(MESH_KEY));
      assert.ok(!m.process.logs().includes(MESH_KEY), `${m.id} logged its mesh key`);
    }
  });

  it('a device without a fleet certificate does not mesh and says why; the others never have it up', async () => {
    // It is told where the others are, and has another mesh key too: it still has nothing to prove who it is with.
    const peers = members.map((m) => `${m.id}@${m.host}:${m.process.ready.ports.mesh}`).join(',');
    rogue = await startMember('mesh-rogue', '127.0.0.5', WRONG_KEY, { MESH_PEERS: peers });
    const r = await status(rogue);
    assert.equal(r.peer_comm_status, 'down');
    assert.match(r.reason ?? '', /the mesh needs this device's fleet certificate: no fleet CA certificate at .*fleet_ca\.crt/);
    assert.equal(r.mesh_key_present, true);
    assert.equal(r.listen_ports.mesh, null);
    // No fleet CA under its data root: its sidecar does not start either and says why.
    assert.equal(r.sidecar.listening, false);
    assert.match(r.sidecar.problem ?? '', /no fleet CA certificate at .*fleet_ca\.crt/);
    assert.equal(r.listen_ports.sidecar, null);
    const health = await rogue.client.callTool({ name: 'get_system_health', arguments: {} });
    const plugins = (health.structuredContent as { plugins: { name: string; state: string; message?: string }[] }).plugins;
    const plugin = plugins.find((p) => p.name === 'peer-mesh');
    assert.equal(plugin?.state, 'degraded', JSON.stringify(plugin));
    assert.match(plugin.message ?? '', /fleet CA/);
    for (const m of members) {
      const s = await status(m);
      assert.notEqual(s.peers.find((p) => p.device_id === 'mesh-rogue')?.state, 'up', `${m.id} has the rogue up`);
      assert.equal(s.peers.filter((p) => p.state === 'up').length, 2);
    }
    await rogue.client.close();
    await rogue.process.stop();
  });

  it('forged, replayed, stale, malformed and self-named datagrams from a raw socket are dropped and counted', async () => {
    const target = members[0];
    const port = target.process.ready.ports.mesh;
    // The test speaks as mesh-b from mesh-b's address (it holds mesh-b's certificate and key, as mesh-b does):
    // its valid datagrams land where mesh-b already is, and mesh-b's next heartbeat puts the port back.
    const asB = createSocket('udp4');
    await new Promise<void>((resolve) => asB.bind(0, '127.0.0.3', resolve));
    try {
      const send = (d: Buffer) => new Promise<void>((resolve, reject) => asB.send(d, port, target.host, (err) => (err ? reject(err) : resolve())));
      const b = await identityOf('mesh-b');
      const key = b.pairKey(Buffer.from(MESH_KEY), target.id, new X509Certificate((await identityOf(target.id)).certificate).publicKey);
      const ack = (over: Partial<MeshMessage>): MeshMessage => ({
        t: 'ack',
        from: 'mesh-b',
        to: target.id,
        seq: 1,
        ts: Date.now(),
        boot: 'raw1',
        echo: 1,
        mesh_port: 9,
        sidecar_port: null,
        ...over,
      });
      const before = (await status(target)).counters;
      const fresh = encodeSealed(ack({ seq: 100 }), key);
      await send(fresh);
      await send(fresh); // replayed as it is
      await send(encodeSealed(ack({ seq: 99 }), key)); // an older sequence number
      await send(encodeSealed(ack({ seq: 101, ts: Date.now() - 120_000 }), key)); // stale
      await send(encodeSealed(ack({ seq: 102, ts: Date.now() + 120_000 }), key)); // from the future
      await send(Buffer.from('hello mesh')); // not framed
      await send(protocol1(ack({ seq: 103 }))); // protocol 1
      const head = Buffer.concat([SEALED_MAGIC, Buffer.from([6]), Buffer.from('mesh-b')]);
      const json = Buffer.from('{"t":"ack",');
      await send(Buffer.concat([head, createHmac('sha256', key).update(head).update(json).digest(), json])); // sealed, not JSON
      await send(encodeSealed(ack({ seq: 104 }), Buffer.from(WRONG_KEY))); // forged
      await send(encodeSealed(ack({ seq: 105, from: target.id }), key)); // claims to be the device itself
      await send(encodeSealed(ack({ seq: 106, to: members[2].id }), key)); // sealed for another device: a relayed capture
      await send(encodeSealed(ack({ seq: 107, from: 'raw-sender' }), key)); // a sender nobody vouched for
      const after = await waitFor(
        'the twelve datagrams counted',
        async () => {
          const c = (await status(target)).counters;
          return c.dropped_malformed - before.dropped_malformed === 3 &&
            c.dropped_unknown_sender - before.dropped_unknown_sender === 2 &&
            Number(c.dropped_misaddressed) - Number(before.dropped_misaddressed) === 1
            ? c
            : undefined;
        },
        5_000,
        50,
      );
      assert.equal(after.dropped_replayed - before.dropped_replayed, 2);
      assert.equal(after.dropped_stale - before.dropped_stale, 2);
      assert.equal(after.dropped_bad_signature - before.dropped_bad_signature, 1);
      assert.ok(!(await status(target)).peers.some((p) => p.device_id === 'raw-sender'));
    } finally {
      asB.close();
    }
  });

  it('cam-9, with valid credentials of its own, cannot speak as mesh-b: mesh-a keeps mesh-b where it is', async () => {
    const target = members[0];
    const port = target.process.ready.ports.mesh;
    const where = async () => {
      const p = (await status(target)).peers.find((x) => x.device_id === 'mesh-b');
      return `${p?.address}:${p?.mesh_port}:${p?.state}`;
    };
    // The test before spoke as mesh-b from another port of its address: mesh-b's own next heartbeat puts it back.
    const before = await waitFor('mesh-b at its own port', async () => {
      const w = await where();
      return w === `127.0.0.3:${members[1].process.ready.ports.mesh}:up` ? w : undefined;
    });
    const cam9 = await identityOf('cam-9');
    const asB = (seq: number, t: MeshMessage['t'] = 'hb'): MeshMessage => ({
      t,
      from: 'mesh-b',
      to: target.id,
      seq,
      ts: Date.now(),
      boot: 'forged',
      mesh_port: raw.address().port,
      sidecar_port: null,
    });
    const counted = async () => {
      const c = (await status(target)).counters;
      return Number(c.dropped_bad_signature) + Number(c.dropped_bad_certificate ?? 0) + c.dropped_malformed;
    };
    const refusedBefore = await counted();
    const send = (d: Buffer) => new Promise<void>((resolve, reject) => raw.send(d, port, target.host, (err) => (err ? reject(err) : resolve())));
    const datagrams = [
      protocol1(asB(1)), // the fleet key, protocol 1: what moved cam-1's record of cam-2 in issue 25
      encodeSealed(asB(2), Buffer.from(MESH_KEY)), // the fleet key, protocol 2
      encodeSealed(asB(3), cam9.pairKey(Buffer.from(MESH_KEY), target.id, new X509Certificate((await identityOf(target.id)).certificate).publicKey)), // its own pair key
      encodeIntroduction({ ...asB(4, 'hello'), known: true }, { fleetKey: Buffer.from(MESH_KEY), certificate: cam9.certificate, privateKey: cam9.privateKey }), // its certificate
    ];
    // Looked at right after each round (mesh-b's own heartbeat, 200 ms apart, would put a moved record back), three rounds.
    const at = async () => (await where()).split(':').slice(0, 2).join(':');
    const home = before.split(':').slice(0, 2).join(':');
    for (let round = 0; round < 3; round++) {
      for (const d of datagrams) await send(d);
      assert.equal(await at(), home, `round ${round}: mesh-b moved`);
      await new Promise((r) => setTimeout(r, 250));
    }
    await waitFor('the forged datagrams refused', async () => (await counted()) - refusedBefore >= 12, 5_000, 50);
  });

  it('signed hellos from 100 ids nobody vouched for do not enter the table', async () => {
    const target = members[0];
    const port = target.process.ready.ports.mesh;
    const cam9 = await identityOf('cam-9');
    const before = await status(target);
    const send = (d: Buffer) => new Promise<void>((resolve, reject) => raw.send(d, port, target.host, (err) => (err ? reject(err) : resolve())));
    for (let i = 0; i < 100; i++) {
      const m: MeshMessage = {
        t: 'hello',
        from: `fake-${i}`,
        to: target.id,
        seq: i + 1,
        ts: Date.now(),
        boot: 'fake',
        mesh_port: raw.address().port,
        sidecar_port: null,
      };
      await send(protocol1(m));
      await send(encodeIntroduction({ ...m, known: false }, { fleetKey: Buffer.from(MESH_KEY), certificate: cam9.certificate, privateKey: cam9.privateKey }));
      // Paced: a UDP buffer overflowing would lose some, and the test counts them.
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 20));
    }
    const refused = (s: PeerMeshStatus) =>
      s.counters.dropped_malformed + Number(s.counters.dropped_bad_certificate) + Number(s.counters.dropped_rate_limited) + s.counters.dropped_unknown_sender;
    const after = await waitFor(
      'the 200 counted',
      async () => {
        const s = await status(target);
        return refused(s) - refused(before) >= 200 ? s : undefined;
      },
      10_000,
      100,
    );
    assert.deepEqual(after.peers.map((p) => p.device_id).sort(), ['mesh-b', 'mesh-c']);
    assert.equal(after.peer_comm_status, 'ok');
    // Past 50 a second from 127.0.0.9 dropped unread; of the rest, protocol 1 is malformed, and an introduction
    // (two a heartbeat from one address) reaches the certificate, cam-9's, which names none of them: no signature is ever checked.
    assert.equal(Number(after.counters.signatures_verified), Number(before.counters.signatures_verified));
  });

  it('2 000 source ports of one address are one sender: rate-limited as one, before any HMAC', async () => {
    const target = members[0];
    const port = target.process.ready.ports.mesh;
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 2000; i++) {
        const s = createSocket('udp4');
        s.on('error', () => undefined);
        await new Promise<void>((resolve) => s.bind(0, '127.0.0.9', resolve));
        sockets.push(s);
      }
      const before = await status(target);
      const started = Date.now();
      const junk = encodeSealed(
        { t: 'hb', from: 'mesh-b', to: target.id, seq: 1, ts: Date.now(), boot: 'flood', mesh_port: 9, sidecar_port: null },
        Buffer.alloc(32, 1),
      );
      for (let i = 0; i < 2000; i += 50) {
        await Promise.all(sockets.slice(i, i + 50).map((s) => new Promise<void>((resolve) => s.send(junk, port, target.host, () => resolve()))));
        await new Promise((r) => setTimeout(r, 5));
      }
      const after = await waitFor(
        'the flood counted',
        async () => {
          const s = await status(target);
          return Number(s.counters.dropped_rate_limited) - Number(before.counters.dropped_rate_limited) >= 1000 ? s : undefined;
        },
        10_000,
        100,
      );
      const seconds = Math.ceil((Date.now() - started) / 1000) + 1;
      const macs = Number(after.counters.macs_computed) - Number(before.counters.macs_computed);
      // The flood's share is at most MESH_MAX_RATE (50) a second; the two peers' heartbeats and acks add about 20 a second.
      assert.ok(macs <= (50 + 40) * seconds, `${macs} MACs in ${seconds} s`);
    } finally {
      for (const s of sockets) s.close();
    }
  });

  it('a vouched device heard once and then silent (cam-9’s phantom) is dropped after MESH_DROP_MS, and the mesh is ok again', async () => {
    const target = members[0];
    const port = target.process.ready.ports.mesh;
    const creds = deviceBusCredentials(FLEET_SECRET, 'cam-9');
    const bus = await mqttClient(broker.url, { username: creds.username, password: creds.password, clientId: 'cam-9' });
    const cam9 = await identityOf('cam-9');
    try {
      await publish(bus, 'devices/cam-9/hello', {
        timestamp: new Date().toISOString(),
        device_id: 'cam-9',
        labels: ['phantom'],
        roles: ['camera'],
        ips: ['127.0.0.9'],
        ports: { tools: 9, mesh: raw.address().port },
        image: 'camera',
        layer: 'layer0',
        versions: { runtime: '0.1.0' },
      });
      await waitFor('mesh-a to take cam-9 from its hello', async () => (await status(target)).peers.some((p) => p.device_id === 'cam-9'), 5_000, 50);
      // A new second for 127.0.0.9's rate (the flood before used it up).
      await new Promise((r) => setTimeout(r, 1100));
      // Heard once (each protocol's way, so the test means the same on either), then never again.
      const m: MeshMessage = {
        t: 'hello',
        from: 'cam-9',
        to: target.id,
        seq: 1,
        ts: Date.now(),
        boot: 'phantom',
        mesh_port: raw.address().port,
        sidecar_port: null,
      };
      const send = (d: Buffer) => new Promise<void>((resolve, reject) => raw.send(d, port, target.host, (err) => (err ? reject(err) : resolve())));
      await send(protocol1(m));
      await send(
        encodeIntroduction({ ...m, seq: 2, known: true }, { fleetKey: Buffer.from(MESH_KEY), certificate: cam9.certificate, privateKey: cam9.privateKey }),
      );
      await waitFor('cam-9 heard', async () => (await status(target)).peers.find((p) => p.device_id === 'cam-9')?.state === 'up', 5_000, 50);
      await waitFor('cam-9 down: the mesh degraded', async () => (await status(target)).peer_comm_status === 'degraded', 10_000, 100);
      const s = await waitFor(
        'cam-9 dropped and the mesh ok again',
        async () => {
          const s = await status(target);
          return !s.peers.some((p) => p.device_id === 'cam-9') && s.peer_comm_status === 'ok' ? s : undefined;
        },
        20_000,
        200,
      );
      assert.ok(Number(s.counters.peers_dropped_silent) >= 1);
    } finally {
      await endClient(bus);
    }
  });

  it('a hello claiming another device, or announcing only a multicast address, is refused and counted by every device; no peer moves', async () => {
    const creds = deviceBusCredentials(FLEET_SECRET, 'cam-9');
    const bus = await mqttClient(broker.url, { username: creds.username, password: creds.password, clientId: 'cam-9' });
    const count = (s: PeerMeshStatus, key: string) => Number(s.counters[key]);
    try {
      const before = await Promise.all(members.map(status));
      const hello = {
        timestamp: new Date().toISOString(),
        labels: ['front_door'],
        roles: ['camera'],
        image: 'camera',
        layer: 'layer0',
        versions: { runtime: '0.1.0' },
      };
      // The broker lets cam-9 publish only under its own id: the payload claims mesh-b and points at the raw socket.
      await publish(bus, 'devices/cam-9/hello', { ...hello, device_id: 'mesh-b', ips: ['127.0.0.9'], ports: { tools: 9, mesh: raw.address().port } });
      await publish(bus, 'devices/cam-9/hello', { ...hello, device_id: 'cam-9', ips: ['224.0.0.251'], ports: { tools: 9, mesh: 11555 } });
      for (const [i, m] of members.entries()) {
        const s = await waitFor(
          `${m.id} to refuse both hellos`,
          async () => {
            const s = await status(m);
            return count(s, 'hellos_refused_topic_mismatch') === count(before[i], 'hellos_refused_topic_mismatch') + 1 &&
              count(s, 'hellos_refused_address') === count(before[i], 'hellos_refused_address') + 1
              ? s
              : undefined;
          },
          5_000,
          50,
        );
        assert.ok(!s.peers.some((p) => p.device_id === 'cam-9'), `${m.id} took cam-9 as a peer`);
        if (m.id !== 'mesh-b') assert.equal(s.peers.find((p) => p.device_id === 'mesh-b')?.address, '127.0.0.3', `${m.id} moved mesh-b`);
        assert.deepEqual(s.mesh_networks, ['127.0.0.0/8']);
      }
    } finally {
      await endClient(bus);
    }
  });

  it('each sidecar refuses a client without a certificate and one of another CA, and answers peer_hello to a fleet-CA certificate', async () => {
    const hub = fleet.hub();
    const intruder = foreign.device('intruder');
    const [hubCert, hubKey, intruderCert, intruderKey] = await Promise.all([
      readFile(hub.certPath),
      readFile(hub.keyPath),
      readFile(intruder.certPath),
      readFile(intruder.keyPath),
    ]);
    for (const m of members) {
      const at = { host: m.host, port: m.process.ready.ports.sidecar, ca: fleet.caCertPem };
      const refusedBefore = (await status(m)).sidecar.handshakes_refused;
      await assert.rejects(sidecarRequest(at), `${m.id} served a client without a certificate`);
      await assert.rejects(sidecarRequest({ ...at, cert: intruderCert, key: intruderKey }), `${m.id} served a certificate of another CA`);
      await waitFor(`${m.id} to count two refused handshakes`, async () => (await status(m)).sidecar.handshakes_refused === refusedBefore + 2, 5_000, 50);

      const reply = await sidecarRequest({ ...at, cert: hubCert, key: hubKey });
      assert.equal(reply.status, 200);
      const ack = PeerHelloAckSchema.parse(reply.body);
      assert.equal(ack.device_id, m.id);
      assert.equal(ack.caller, 'lookout-hub');
      assert.equal(ack.cert_fingerprint, fleet.device(m.id).fingerprint);
      assert.equal(ack.peers_up, 2);
      // A device's own certificate is a fleet certificate too: peers query each other with it.
      const peer = fleet.device(members.find((o) => o !== m)!.id);
      const fromPeer = await sidecarRequest({ ...at, cert: await readFile(peer.certPath), key: await readFile(peer.keyPath) });
      assert.equal(PeerHelloAckSchema.parse(fromPeer.body).caller, peer.name);
      assert.equal((await status(m)).sidecar.queries_answered, 2);
    }
  });
});
