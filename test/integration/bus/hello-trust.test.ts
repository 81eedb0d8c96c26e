/**
 * What a device's hello may claim (issue 25, item 8), against the hub's embedded broker with
 * per-device identity: a label only hellos announce stays with the first device that claimed it
 * (across a restart; the operator releases it), and a hello's tool address is the address the
 * device's bus connection comes from, not the one it announces. Loopback stands for the network: a
 * device bound to 127.0.0.5 announcing 127.0.0.9 (as a hostile one announced 127.0.0.1:9).
 */
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MqttClient } from 'mqtt';
import { busPassword } from '../../../lib/auth/bus-acl.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { api, endClient, msg, publish, testHub, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

const TOKEN = 'hello-trust-bearer-token-0123456789';

/** A device's bus client with its own identity, its TCP connection made from `localAddress`. */
function deviceClient(brokerUrl: string, deviceId: string, localAddress: string): Promise<MqttClient> {
  const { hostname, port } = new URL(brokerUrl);
  return new Promise((resolve, reject) => {
    const client = new MqttClient(() => createConnection({ host: hostname, port: Number(port), localAddress }), {
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5000,
      clientId: deviceId,
      username: deviceId,
      password: busPassword(TEST_FLEET_SECRET, deviceId),
    });
    client.once('connect', () => resolve(client));
    client.once('error', (err) => {
      client.end(true);
      reject(err);
    });
  });
}

describe('what a hello may claim, on the embedded broker', () => {
  let scratch: ScratchDir;
  let hub: RunningHub;
  const clients: MqttClient[] = [];
  // Loopback: a hub beyond it serves HTTPS only, and this test is about the bus.
  const start = () => testHub({ anonymousBroker: false, dataDir: join(scratch.dir, 'hub'), token: TOKEN, host: '127.0.0.1' });
  const registry = async () => (await api(hub.url, '/fleet/registry', { token: TOKEN })).body;
  const shadow = async (id: string) => (await registry()).shadows.find((s: { device_id: string }) => s.device_id === id);
  const hello = async (deviceId: string, from: string, announced: string, labels: string[]) => {
    const c = await deviceClient(hub.brokerUrl, deviceId, from);
    clients.push(c);
    await publish(c, `devices/${deviceId}/hello`, { ...msg.hello(deviceId, [announced], 9, labels) });
    return c;
  };

  before(async () => {
    scratch = await scratchDir('lookout-hello-trust-');
    hub = await start();
  });
  after(async () => {
    for (const c of clients) c.end(true);
    await hub?.close();
    await scratch?.cleanup();
  });

  it('a device connected from 127.0.0.5 announcing 127.0.0.9 is contacted at 127.0.0.5', async () => {
    await hello('cam-5', '127.0.0.5', '127.0.0.9', ['porch']);
    await waitFor('the hello of cam-5', async () => (await shadow('cam-5')) !== undefined);
    const s = await shadow('cam-5');
    assert.equal(s.connected_from, '127.0.0.5');
    assert.equal(s.tool_url, 'http://127.0.0.5:9/mcp', 'the announced 127.0.0.9 is not used');
    const call = await api(hub.url, '/tools/list?target=127.0.0.9:9', { token: TOKEN });
    assert.equal(call.body?.error?.code, 'target_unknown', 'the announced address names no device');
  });

  it('a second device’s hello claiming a label a first device holds is refused, counted, and shown; a restart keeps the holder; the operator releases it', async () => {
    await hello('cam-1', '127.0.0.11', '127.0.0.11', ['lobby']);
    await waitFor('cam-1 holding lobby', async () => (await shadow('cam-1'))?.labels.includes('lobby') === true);
    await hello('evil-1', '127.0.0.66', '127.0.0.1', ['lobby', 'evil-1']);
    await waitFor('the hello of evil-1', async () => (await shadow('evil-1')) !== undefined);

    const view = await registry();
    assert.deepEqual(
      view.label_claims.holders.filter((h: { label: string }) => h.label === 'lobby').map((h: { device_id: string }) => h.device_id),
      ['cam-1'],
    );
    assert.equal(view.label_claims.refused, 1);
    assert.deepEqual(
      view.label_claims.recent_refusals.map((r: Record<string, string>) => [r.device_id, r.label, r.held_by]),
      [['evil-1', 'lobby', 'cam-1']],
    );
    assert.deepEqual((await shadow('evil-1')).refused_labels, ['lobby']);
    assert.equal((await shadow('evil-1')).tool_url, 'http://127.0.0.66:9/mcp', 'and not the 127.0.0.1 it announced');
    const events = (await api(hub.url, '/debug/events', { token: TOKEN })).body;
    assert.ok(JSON.stringify(events).includes('hello from evil-1 claims the label lobby, held by cam-1: refused'), 'the refusal is in the debug events');

    for (const c of clients.splice(0)) await endClient(c);
    await hub.close();
    hub = await start();
    const restarted = await registry();
    assert.deepEqual(
      restarted.label_claims.holders.filter((h: { label: string }) => h.label === 'lobby').map((h: { device_id: string }) => h.device_id),
      ['cam-1'],
      'the holder is kept in the hub state',
    );
    assert.equal((await shadow('evil-1')).tool_url, 'http://127.0.0.66:9/mcp', 'where it connected from is kept too');
    await hello('evil-1', '127.0.0.66', '127.0.0.1', ['lobby']);
    await waitFor('evil-1’s new hello refused', async () => (await registry()).label_claims.refused === 1);
    assert.deepEqual((await shadow('evil-1')).refused_labels, ['lobby']);

    const released = await api(hub.url, '/fleet/registry/labels/lobby', { method: 'DELETE', token: TOKEN });
    assert.equal(released.status, 200, released.text);
    assert.deepEqual(released.body, { label: 'lobby', released_from: 'cam-1', holder: null });
    const given = await api(hub.url, '/fleet/registry/labels/lobby?to=cam-1', { method: 'DELETE', token: TOKEN });
    assert.deepEqual(given.body, { label: 'lobby', released_from: null, holder: 'cam-1' });
    const none = await api(hub.url, '/fleet/registry/labels/porch-of-nobody', { method: 'DELETE', token: TOKEN });
    assert.equal(none.status, 404);
  });
});
