/**
 * The peer mesh between real `lookout-edge` processes on one machine: three devices listening on
 * 127.0.0.2, .3 and .4 (`--tool-host`) on an embedded broker that enforces the bus ACL find each
 * other from their hello and form a mesh (every peer up, round trips measured); a fourth with
 * another mesh key never joins; forged, replayed, stale, malformed and misaddressed datagrams from
 * a raw socket are dropped and counted; a hello claiming another device's id, or announcing no
 * usable address, is refused and counted; each sidecar refuses clients without a fleet-CA certificate and answers
 * peer_hello to those with one. Nothing is sent beyond loopback, and no broadcast or multicast.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { deviceBusCredentials } from '../../core/src/auth/device-bus-credentials.js';
import { PeerHelloAckSchema, PeerMeshStatusSchema, type PeerMeshStatus } from '../../core/src/contracts/peer-mesh-status.js';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { EmbeddedBroker } from '../../hub/src/broker/embedded-broker.js';
import { encodeDatagram, MESH_MAGIC, type MeshMessage } from '../../plugins/peer-mesh/src/datagram.js';
import { startDeviceProcess, type DeviceProcess } from '../support/device-process.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../support/fleet-certs.js';
import { sidecarRequest } from '../unit/plugins/peer-mesh/sidecar-client.js';
import { endClient, mqttClient, publish, waitFor } from './hub-helpers.js';

const FLEET_SECRET = 'peer-mesh-test-fleet-secret-41c2';
const MESH_KEY = 'peer-mesh-test-mesh-key-5be81f0a';
const WRONG_KEY = 'a-mesh-key-of-some-other-fleet-0';
const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'mesh-camera.json');
/** Short intervals: up within a few heartbeats, suspect after 3, down after 5. */
const MESH_ENV = { MESH_HEARTBEAT_MS: '200', HEALTH_INTERVAL_MS: '60000', STATUS_INTERVAL_MS: '60000' };

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
      devices: devices.map((d) => ({ id: d.id, dataRoot: join(dir, d.id), ips: [d.host] })),
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

  it('a device with another mesh key never joins: the others count its datagrams as bad signatures', async () => {
    const before = await Promise.all(members.map(status));
    // It is told where the others are (its hello learns nothing of devices that greeted before it came), so it does send to them.
    const peers = members.map((m) => `${m.id}@${m.host}:${m.process.ready.ports.mesh}`).join(',');
    rogue = await startMember('mesh-rogue', '127.0.0.5', WRONG_KEY, { MESH_PEERS: peers });
    for (const [i, m] of members.entries()) {
      await waitFor(
        `${m.id} to count the rogue's datagrams as bad signatures`,
        async () => (await status(m)).counters.dropped_bad_signature >= before[i].counters.dropped_bad_signature + 2,
        10_000,
        100,
      );
    }
    // Several heartbeats later it is still out: never up anywhere, and the three still see each other.
    const rogueView = await status(rogue);
    await waitFor('the rogue to have sent a few heartbeats', async () => (await status(rogue!)).counters.sent >= rogueView.counters.sent + 9, 10_000, 100);
    for (const m of members) {
      const s = await status(m);
      const seen = s.peers.find((p) => p.device_id === 'mesh-rogue');
      assert.notEqual(seen?.state, 'up', `${m.id} has the rogue up`);
      assert.equal(s.peers.filter((p) => p.device_id !== 'mesh-rogue' && p.state === 'up').length, 2);
    }
    const r = await status(rogue);
    assert.equal(r.peers_up, 0);
    assert.equal(r.peer_comm_status, 'isolated');
    assert.ok(r.counters.dropped_bad_signature > 0, 'the fleet’s datagrams are bad signatures to it');
    // No fleet CA under its data root: its sidecar does not start and says why; its mesh runs anyway.
    assert.equal(r.sidecar.listening, false);
    assert.match(r.sidecar.problem ?? '', /no fleet CA certificate at .*fleet_ca\.crt/);
    assert.equal(r.listen_ports.sidecar, null);
    assert.ok(r.listen_ports.mesh);
    const health = await rogue.client.callTool({ name: 'get_system_health', arguments: {} });
    const plugins = (health.structuredContent as { plugins: { name: string; state: string; message?: string }[] }).plugins;
    const plugin = plugins.find((p) => p.name === 'peer-mesh');
    assert.equal(plugin?.state, 'degraded', JSON.stringify(plugin));
    assert.match(plugin.message ?? '', /fleet CA/);
    await rogue.client.close();
    await rogue.process.stop();
  });

  it('forged, replayed, stale, malformed and self-named datagrams from a raw socket are dropped and counted', async () => {
    const target = members[0];
    const port = target.process.ready.ports.mesh;
    const send = (d: Buffer) => new Promise<void>((resolve, reject) => raw.send(d, port, target.host, (err) => (err ? reject(err) : resolve())));
    const key = Buffer.from(MESH_KEY);
    // acks: an accepted one changes nothing in the table (it answers nothing we asked), so the raw sender never becomes a peer.
    const ack = (over: Partial<MeshMessage>): MeshMessage => ({
      t: 'ack',
      from: 'raw-sender',
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
    const fresh = encodeDatagram(ack({ seq: 100 }), key);
    await send(fresh);
    await send(fresh); // replayed as it is
    await send(encodeDatagram(ack({ seq: 99 }), key)); // an older sequence number
    await send(encodeDatagram(ack({ seq: 101, ts: Date.now() - 120_000 }), key)); // stale
    await send(encodeDatagram(ack({ seq: 102, ts: Date.now() + 120_000 }), key)); // from the future
    await send(Buffer.from('hello mesh')); // not framed
    const json = Buffer.from('{"t":"ack",');
    await send(Buffer.concat([MESH_MAGIC, createHmac('sha256', key).update(json).digest(), json])); // signed, not JSON
    await send(encodeDatagram(ack({ seq: 103 }), Buffer.from(WRONG_KEY))); // forged
    await send(encodeDatagram(ack({ seq: 104, from: target.id }), key)); // claims to be the device itself
    await send(encodeDatagram(ack({ seq: 105, to: members[1].id }), key)); // signed for another device: a relayed capture
    const after = await waitFor(
      'the ten datagrams counted',
      async () => {
        const c = (await status(target)).counters;
        return c.dropped_malformed - before.dropped_malformed === 2 &&
          c.dropped_unknown_sender - before.dropped_unknown_sender === 1 &&
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
