import { DEVICE_PATHS, definePlugin, devicePath, deviceInfo, surfacePort, toLookoutError, z } from 'lookout/core';
import { PeerMeshStatusSchema, type PeerHelloAck } from 'lookout/core/contracts';
import { DeviceIdentityToken } from '../../identity/src/service.js';
import { DEFAULT_MESH_PORT, DEFAULT_SIDECAR_PORT, PeerMeshConfigSchema, meshTimings } from './config.js';
import { peerFromHello } from './hello-peer.js';
import { MeshIdentity } from './mesh-identity.js';
import { loadMeshKey } from './mesh-key.js';
import { MeshNetworks } from './mesh-networks.js';
import { MeshNode } from './mesh-node.js';
import { commStatus, meshStatus, peerEntries, type MeshView, type SidecarView } from './mesh-status.js';
import { overlayMount } from './overlay-mount.js';
import { parseMeshPeers } from './peer-address.js';
import { checkSidecarMaterial } from './sidecar-material.js';
import { SidecarServer } from './sidecar-server.js';

/** Every device's hello: where the peers announce their mesh and sidecar ports (the bus ACL lets a device read it). */
export const PEER_DIRECTORY = 'devices/+/hello';

/**
 * The peer mesh (layer 0): UDP heartbeats between the devices of a fleet, each pair's sealed under a key
 * only those two devices can derive (from their fleet certificates' keys, under the fleet mesh key;
 * replay window and per-boot sequence), peers only from each other's hello on the bus and from
 * MESH_PEERS, never by broadcast; and the mTLS sidecar that answers peer queries from holders of a
 * fleet-CA certificate. The mesh needs the mesh key and the device's fleet certificate (a device without
 * one could only speak for nobody); the sidecar runs without the key. get_peer_mesh_status reports both.
 */
export default definePlugin({
  name: 'peer-mesh',
  version: '1.0.0',
  core: '^1',
  description: 'peer mesh: UDP heartbeats (11555) sealed per device pair, with peers from their hello, and the mTLS sidecar (8777) for peer queries',
  layer: 'layer0',
  requires: [DeviceIdentityToken],
  config: PeerMeshConfigSchema,
  subscriptions: [PEER_DIRECTORY],
  tools: [
    {
      name: 'get_peer_mesh_status',
      readOnly: true,
      idempotent: true,
      description:
        'Peer mesh now: peer_comm_status and why, each peer with its state (up/suspect/down), address, last seen and round-trip time, the mesh and sidecar ports, the overlay mount, whether a mesh key is present (never the key), the sidecar and the datagram counters by drop reason',
      input: z.object({}),
      output: PeerMeshStatusSchema,
    },
  ],
  errors: [
    { code: 'query_unknown', status: 400, description: 'the sidecar knows no peer query of that name (q=peer_hello is the one)' },
    { code: 'route_unknown', status: 404, description: 'the sidecar serves POST /peer/query only' },
    { code: 'method_not_allowed', status: 405, description: 'peer queries are POST' },
    { code: 'body_too_large', status: 413, description: 'a peer query body is at most 16 KiB' },
  ],
  async start(ctx) {
    const { config, log, runtime } = ctx;
    const info = deviceInfo(runtime);
    const identity = ctx.services.get(DeviceIdentityToken);
    const dataRoot = devicePath(runtime.dataDir, '/data');
    const meshKey = await loadMeshKey(config.MESH_KEY, devicePath(runtime.dataDir, DEVICE_PATHS.meshKey));
    let node: MeshNode | null = null;
    let sidecar: SidecarServer | null = null;
    let meshProblem: string | null = meshKey.problem;
    let meshNetworks: MeshNetworks | null = null;
    const sidecarView: SidecarView = {
      listening: false,
      port: null,
      problem: null,
      ca_fingerprint: null,
      queries_answered: 0,
      handshakes_refused: 0,
      connections_refused: 0,
      handshakes_timed_out: 0,
    };
    const view = async (): Promise<MeshView> => ({
      deviceId: runtime.id,
      node,
      keyPresent: meshKey.key !== null,
      problem: meshProblem,
      networks: meshNetworks?.cidrs ?? null,
      sidecar: sidecar ? { ...sidecarView, listening: sidecar.port !== null, port: sidecar.port, ...sidecar.stats } : sidecarView,
      overlayMount: await overlayMount(dataRoot),
      now: new Date(ctx.clock.now()),
    });
    ctx.tools.register('get_peer_mesh_status', async () => meshStatus(await view()));

    if (info.oneShot) {
      // Without a key the status says no_key and why; with one, down because of the mode.
      if (meshKey.key) meshProblem = 'one-shot mode: the mesh does not run';
      sidecarView.problem = 'one-shot mode: the sidecar does not run';
      ctx.health.set('ok', 'one-shot mode: the mesh and the sidecar do not run');
      return;
    }

    // The sidecar first, so the mesh's datagrams carry its port from the first one.
    const material = await checkSidecarMaterial({
      caPath: devicePath(runtime.dataDir, DEVICE_PATHS.fleetCa),
      certPath: identity.certPath,
      keyPath: identity.keyPath,
    });
    sidecarView.ca_fingerprint = material.ok ? material.material.caFingerprint : material.caFingerprint;
    if (!material.ok) {
      sidecarView.problem = material.problem;
    } else {
      const fingerprint = identity.fingerprint();
      const server = new SidecarServer({
        host: info.listenHost,
        port: surfacePort(runtime, 'sidecar', DEFAULT_SIDECAR_PORT),
        material: material.material,
        log,
        peerHello: (caller): PeerHelloAck => {
          const peers = peerEntries(node);
          return {
            q: 'peer_hello',
            ack: true,
            device_id: runtime.id,
            cert_fingerprint: fingerprint,
            peer_comm_status: commStatus({ node, keyPresent: meshKey.key !== null, problem: meshProblem, sidecar: { ...sidecarView, listening: true } }, peers)
              .status,
            peers_up: peers.filter((p) => p.state === 'up').length,
            caller,
            received_at: new Date(ctx.clock.now()).toISOString(),
          };
        },
      });
      try {
        const port = await server.listen();
        sidecar = server;
        ctx.ports.announce('sidecar', port);
        ctx.onStop(() => server.close());
        log.info({ host: info.listenHost, port, ca_fingerprint: material.material.caFingerprint }, 'peer sidecar listening (mTLS, fleet CA pinned)');
      } catch (err) {
        sidecarView.problem = `the sidecar could not listen on ${info.listenHost}:${surfacePort(runtime, 'sidecar', DEFAULT_SIDECAR_PORT)}: ${toLookoutError(err).message}`;
      }
    }
    if (sidecarView.problem) log.warn({ problem: sidecarView.problem }, 'peer sidecar not serving');

    if (meshKey.key && !material.ok) {
      // Protocol 1 meshed on the fleet key alone, which let any device sign as any other; a device now proves who it is with its certificate.
      meshProblem = `the mesh needs this device's fleet certificate: ${material.problem}`;
    } else if (meshKey.key && material.ok) {
      const timings = meshTimings(config);
      const networks = MeshNetworks.resolve(config.MESH_NETWORKS, info.listenHost);
      const candidate = new MeshNode({
        deviceId: runtime.id,
        host: info.listenHost,
        port: surfacePort(runtime, 'mesh', DEFAULT_MESH_PORT),
        key: meshKey.key,
        identity: new MeshIdentity(runtime.id, material.material),
        timings,
        maxPeers: config.MESH_MAX_PEERS,
        maxRatePerSender: config.MESH_MAX_RATE,
        networks,
        sidecarPort: () => sidecar?.port ?? null,
        now: () => ctx.clock.now(),
        log,
        onTransition: (t) => log.info({ peer: t.deviceId, from: t.from, to: t.to }, `mesh peer ${t.deviceId} is ${t.to}`),
      });
      try {
        const port = await candidate.start();
        node = candidate;
        meshNetworks = networks;
        ctx.ports.announce('mesh', port);
        ctx.onStop(() => candidate.close());
        for (const p of parseMeshPeers(config.MESH_PEERS)) candidate.addPeer({ deviceId: p.deviceId, address: p.host, meshPort: p.port, source: 'config' });
        ctx.clock.setInterval(() => candidate.tick(), timings.heartbeatMs);
        await ctx.bus.subscribe(PEER_DIRECTORY, (topic, payload) => {
          const outcome = peerFromHello(topic, payload, { deviceId: runtime.id, listenHost: info.listenHost, networks });
          if (outcome.kind === 'peer') candidate.addPeer(outcome.announce);
          if (outcome.kind !== 'refused') return;
          if (outcome.reason === 'topic_mismatch') candidate.counters.hellos_refused_topic_mismatch += 1;
          else candidate.counters.hellos_refused_address += 1;
          log.debug({ topic, reason: outcome.reason }, 'hello refused by the mesh');
        });
        log.info(
          { host: info.listenHost, port, key_source: meshKey.source, heartbeat_ms: timings.heartbeatMs, drop_ms: timings.dropMs, networks: networks.cidrs },
          'peer mesh listening',
        );
      } catch (err) {
        await candidate.close();
        meshProblem = `the mesh could not listen on UDP ${info.listenHost}:${surfacePort(runtime, 'mesh', DEFAULT_MESH_PORT)}: ${toLookoutError(err).message}`;
      }
    }

    const problems = [meshProblem, sidecarView.problem].filter((p): p is string => p !== null);
    if (problems.length > 0) ctx.health.set('degraded', problems.join('; '));
    else ctx.health.set('ok', `mesh on UDP ${node?.port}, sidecar on ${sidecar?.port}`);
  },
});
