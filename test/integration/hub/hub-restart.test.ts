/**
 * The hub forgets nothing across a restart (issue 11, item 8): the latest cache, incidents, the
 * registry's view of hello-announced devices and the debug ring's tail are saved under the data
 * dir and reloaded; a corrupt state file is set aside; a registry file edited on disk is read
 * before the next answer. Embedded broker, as a newcomer's `npm start` runs it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { api, callTool, endClient, mqttClient, msg, publish, sleep, testHub, waitFor } from '../../support/hub-helpers.js';

const STALE_SEC = 1;

async function withHub<T>(dataDir: string, body: (hub: RunningHub) => Promise<T>): Promise<T> {
  const hub = await testHub({ dataDir, staleSec: STALE_SEC });
  try {
    return await body(hub);
  } finally {
    await hub.close();
  }
}

describe('hub restart', () => {
  it('still lists a device that went offline before the restart, offline and stale, with its last payload, incidents, hello and ring tail', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hub-restart-'));
    const telemetry = msg.telemetry(51.5);
    const before = await withHub(dataDir, async (hub) => {
      const client = await mqttClient(hub.brokerUrl);
      try {
        await publish(client, 'devices/cam-r/hello', msg.hello('cam-r', ['127.0.0.1'], 9));
        await publish(client, 'devices/cam-h/hello', msg.hello('cam-h', ['127.0.0.1'], 9, ['spare']));
        await publish(client, 'devices/cam-r/status', msg.status('cam-r', 'online'));
        await publish(client, 'devices/cam-r/telemetry', telemetry);
        await publish(client, 'devices/cam-r/events/incident', msg.incident('person at the gate'));
        await publish(client, 'devices/cam-r/status', msg.status('cam-r', 'offline'));
      } finally {
        await endClient(client);
      }
      const entry = await waitFor('cam-r offline', async () => {
        const e = (await api(hub.url, '/fleet/mqtt/latest?device=cam-r')).body.devices['cam-r'];
        return e?.status?.state === 'offline' && e.anomaly_alerts.length === 1 ? e : undefined;
      });
      await waitFor('cam-h registered', async () => (await api(hub.url, '/fleet/registry?device=cam-h')).body.registry.devices.length === 1);
      return { entry, hello: (await api(hub.url, '/fleet/registry?device=cam-h')).body.shadows[0] };
    });
    // Long enough for the device to be stale by the time the restarted hub answers.
    await sleep(STALE_SEC * 1000 + 200);

    await withHub(dataDir, async (hub) => {
      const latest = (await api(hub.url, '/fleet/mqtt/latest')).body;
      const e = latest.devices['cam-r'];
      assert.ok(e, `cam-r is listed after the restart: ${JSON.stringify(Object.keys(latest.devices))}`);
      assert.equal(e.status.state, 'offline');
      assert.equal(e.online, false);
      assert.equal(e.stale, true);
      assert.deepEqual(e.payload, telemetry);
      assert.equal(e.last_message_at, before.entry.last_message_at, 'its times are those from before the restart');
      assert.equal(e.anomaly_alerts.length, 1);
      assert.equal(e.anomaly_alerts[0].message, 'person at the gate');

      const shadow = (await api(hub.url, '/fleet/registry?device=cam-h')).body.shadows[0];
      assert.ok(shadow, 'the hello-only device is still registered');
      assert.equal(shadow.source, 'hello');
      assert.equal(shadow.restored, true);
      assert.equal(shadow.last_hello_at, before.hello.last_hello_at);
      assert.equal(shadow.tool_url, before.hello.tool_url);

      const events = (await api(hub.url, '/debug/events?kind=presence&device=cam-r')).body.events;
      const offline = events.find((ev: any) => ev.message === 'cam-r is offline');
      assert.ok(offline, `the ring's tail survives: ${JSON.stringify(events)}`);
      assert.equal(offline.restored, true);
    });
  });

  it('sets a corrupt state file aside and starts empty', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hub-restart-'));
    await withHub(dataDir, async (hub) => {
      const client = await mqttClient(hub.brokerUrl);
      await publish(client, 'devices/cam-c/hello', msg.hello('cam-c', ['127.0.0.1'], 9));
      await endClient(client);
      await waitFor('cam-c', async () => (await api(hub.url, '/fleet/mqtt/latest')).body.count === 1);
    });
    const state = join(dataDir, 'state');
    // A file cut short, as a crash mid-write without the atomic rename would leave it.
    writeFileSync(join(state, 'bus-cache.json'), '{"format":"lookout-hub-state/1","key":"bus-cache","value":{"devices":[{"dev');
    await withHub(dataDir, async (hub) => {
      assert.equal((await api(hub.url, '/fleet/mqtt/latest')).body.count, 0);
      assert.ok(
        readdirSync(state).some((f) => f.startsWith('bus-cache.json.corrupt-')),
        `set aside: ${readdirSync(state).join(', ')}`,
      );
      const events = (await api(hub.url, '/debug/events?kind=hub')).body.events;
      assert.ok(
        events.some((ev: any) => /hub state "bus-cache" not restored/.test(ev.message)),
        JSON.stringify(events),
      );
      // The other keys were fine: the registry still knows the hello.
      assert.equal((await api(hub.url, '/fleet/registry?device=cam-c')).body.shadows.length, 1);
    });
  });

  it('reads a registry file edited on disk before the very next answer, and keeps the last good one over a broken edit', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hub-restart-'));
    const file = join(dataDir, 'registry.json');
    const write = (devices: unknown[]) => writeFileSync(file, JSON.stringify({ bus_id: 'edit-fleet', devices }));
    write([{ device_id: 'cam-x', ips: ['127.0.0.1'], tool_port: 9 }]);
    await withHub(dataDir, async (hub) => {
      const ids = async () => (await api(hub.url, '/fleet/registry')).body.registry.devices.map((d: any) => d.device_id);
      assert.deepEqual(await ids(), ['cam-x']);
      assert.equal((await callTool(hub.url, 'cam-y', 'get_status')).body.error?.code, 'target_unknown');

      write([
        { device_id: 'cam-x', ips: ['127.0.0.1'], tool_port: 9 },
        { device_id: 'cam-y', ips: ['127.0.0.1'], tool_port: 9 },
      ]);
      assert.deepEqual(await ids(), ['cam-x', 'cam-y'], 'the GET right after the edit sees it');
      assert.notEqual((await callTool(hub.url, 'cam-y', 'get_status')).body.error?.code, 'target_unknown', 'tool resolution sees it too');

      writeFileSync(file, '{ "devices": [ { "device_id": ');
      const broken = await api(hub.url, '/fleet/registry');
      assert.equal(broken.status, 200);
      assert.deepEqual(
        broken.body.registry.devices.map((d: any) => d.device_id),
        ['cam-x', 'cam-y'],
        'the last good file stays',
      );
      assert.match(broken.body.warnings?.[0] ?? '', /not reloaded/);
      const events = (await api(hub.url, '/debug/events?kind=registry')).body.events;
      assert.ok(
        events.some((ev: any) => /not reloaded/.test(ev.message)),
        JSON.stringify(events),
      );

      write([{ device_id: 'cam-z', ips: ['127.0.0.1'], tool_port: 9 }]);
      const fixed = (await api(hub.url, '/fleet/registry')).body;
      assert.deepEqual(
        fixed.registry.devices.map((d: any) => d.device_id),
        ['cam-z'],
      );
      assert.equal(fixed.warnings, undefined);
    });
  });
});
