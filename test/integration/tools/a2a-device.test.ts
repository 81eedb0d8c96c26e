/**
 * Signed peer queries end to end: a real hub (embedded broker) and real `lookout-edge` devices whose
 * peer-mesh plugin serves the mTLS sidecar. A client with node:crypto and fetch only signs
 * peer_hello; the hub verifies it and forwards it over mutual TLS with its certificate of the fleet
 * CA; the device acknowledges, naming the hub. A device whose certificate is of another CA is not
 * trusted by the hub (its handshake fails), and a signature the hub refuses never reaches a device
 * (the device's own count of answered queries says so).
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { a2aTestHub } from '../../support/a2a-helpers.js';
import { a2aKeyFromFleetSecret, send, signPeerQuery } from '../../support/a2a-plain-client.js';
import { api, callTool, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'mesh-camera.json');
const LIGHT = { MESH_KEY: 'a2a-device-test-mesh-key-0001', MESH_HEARTBEAT_MS: '500', HEALTH_INTERVAL_MS: '60000', STATUS_INTERVAL_MS: '60000' };

describe('A2A: a signed peer_hello through a real hub to a real device sidecar', () => {
  let scratch: ScratchDir;
  let fleet: TestFleetCerts;
  let hub: RunningHub;
  const devices: DeviceProcess[] = [];
  const key = a2aKeyFromFleetSecret(TEST_FLEET_SECRET);

  const start = (id: string, host: string) =>
    startDeviceProcess({
      deviceId: id,
      mqtt: hub.brokerUrl,
      image: IMAGE,
      layer: 'layer0',
      dataDir: join(scratch.dir, id),
      extraArgs: ['--tool-host', host],
      env: LIGHT,
    });
  const registered = async (id: string) =>
    ((await api(hub.url, '/fleet/registry')).body.registry.devices as { device_id: string; reachable: boolean }[]).some(
      (d) => d.device_id === id && d.reachable,
    );

  before(async () => {
    scratch = await scratchDir('lookout-a2a-device-');
    fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), {
      devices: [{ id: 'a2a-cam', dataRoot: join(scratch.dir, 'a2a-cam'), ips: ['127.0.0.2'] }],
      hubDataDir: join(scratch.dir, 'hub'),
    });
    // A device of another fleet CA: its sidecar serves (it trusts its own CA), the hub must not trust it.
    await provisionTestFleetCerts(join(scratch.dir, 'other-ca'), {
      devices: [{ id: 'other-cam', dataRoot: join(scratch.dir, 'other-cam'), ips: ['127.0.0.3'] }],
    });
    // Each tool server listens on its own loopback address but connects to the broker from 127.0.0.1:
    // the registry file names their addresses (the hub uses the address a hello's bus connection
    // comes from otherwise, not the one it announces).
    const registryFile = join(scratch.dir, 'registry.json');
    await writeFile(
      registryFile,
      JSON.stringify({
        devices: [
          { device_id: 'a2a-cam', ips: ['127.0.0.2'] },
          { device_id: 'other-cam', ips: ['127.0.0.3'] },
        ],
      }),
    );
    // The hub's own readiness checks send peer_hello to each sidecar too: none in this test's time, so the
    // device's count of answered queries is the test's.
    hub = await a2aTestHub({
      dataDir: join(scratch.dir, 'hub'),
      registryFile,
      env: { READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '86400000' },
    });
    devices.push(...(await Promise.all([start('a2a-cam', '127.0.0.2'), start('other-cam', '127.0.0.3')])));
    // Their hello carries the sidecar port (the ready line already says it is listening).
    for (const d of devices) assert.equal(typeof d.ready.ports.sidecar, 'number', d.logs().slice(-2000));
    await waitFor('both devices in the registry', async () => (await registered('a2a-cam')) && (await registered('other-cam')), 20_000);
  });
  after(async () => {
    await Promise.all(devices.map((d) => d.stop()));
    await hub?.close();
    await scratch?.cleanup();
  });

  it('the device acknowledges the hub: its id, its certificate fingerprint, the hub as caller', async () => {
    const r = await send(
      signPeerQuery(hub.url, key, [
        ['q', 'peer_hello'],
        ['target', 'a2a-cam'],
      ]),
    );
    assert.equal(r.status, 200, `${JSON.stringify(r.body)}\n${devices[0].logs().slice(-2000)}`);
    assert.equal(r.body.device_id, 'a2a-cam');
    assert.equal(r.body.caller, 'lookout-hub');
    assert.equal(r.body.cert_fingerprint, fleet.device('a2a-cam').fingerprint, 'the sidecar serves the provisioned certificate');
    assert.equal(r.body.sidecar, `127.0.0.2:${devices[0].ready.ports.sidecar}`);
    assert.ok(['ok', 'degraded', 'isolated'].includes(r.body.peer_comm_status as string), r.body.peer_comm_status);
  });

  it('a device whose certificate is of another CA: 502 peer_unreachable, its handshake refused by the hub', async () => {
    const r = await send(
      signPeerQuery(hub.url, key, [
        ['q', 'peer_hello'],
        ['target', 'other-cam'],
      ]),
    );
    assert.deepEqual([r.status, r.body.error?.code], [502, 'a2a.peer_unreachable'], JSON.stringify(r.body));
    assert.match(r.body.error.message, /certificate/i);
  });

  it('a refused signature never reaches the device: its sidecar answered no more queries', async () => {
    // The device's own count (get_peer_mesh_status through the hub's tool proxy).
    const answered = async () => {
      const r = await callTool(hub.url, 'a2a-cam', 'get_peer_mesh_status');
      assert.equal(r.status, 200, r.text);
      return (r.body.result as { sidecar: { queries_answered: number } }).sidecar.queries_answered;
    };
    const before = await answered();
    const r = await send(
      signPeerQuery(hub.url, 'a-key-of-nobody-in-this-fleet', [
        ['q', 'peer_hello'],
        ['target', 'a2a-cam'],
      ]),
    );
    assert.deepEqual([r.status, r.body.error?.code], [401, 'a2a.signature_invalid']);
    assert.equal(await answered(), before);
    assert.deepEqual(
      (
        await send(
          signPeerQuery(hub.url, key, [
            ['q', 'peer_hello'],
            ['target', 'a2a-cam'],
          ]),
        )
      ).status,
      200,
    );
    assert.equal(await answered(), before + 1, 'a signed one does');
  });
});
