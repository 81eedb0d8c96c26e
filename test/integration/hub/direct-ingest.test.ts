/**
 * A plain hub on an MQTT 5 broker takes its device topics on a session of their own (direct-ingest.ts),
 * not on its bus connection. Real mosquitto. What a user sees must not change: retained messages at
 * start, each handler once per message under overlapping filters, a handler's failure kept to itself.
 * And a bus session that an earlier run (or version) subscribed device topics in stops receiving them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type MqttClient } from 'mqtt';
import type { MessageHandler } from 'lookout/core/host';
import { hubBusClientId } from '../../../hub/src/hub-bus-client-id.js';
import { DirectIngest } from '../../../hub/src/state/direct-ingest.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { LogRing } from '../../../core/src/log/log-ring.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { api, endClient, mqttClient, msg, publish, sleep, testHub, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

/** An MQTT 5 client of a persistent session, as the hub's bus connection is (MqttBus: clean false, never expires). */
function persistentSession(url: string, clientId: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = connect(url, { clientId, protocolVersion: 5, clean: false, reconnectPeriod: 0, properties: { sessionExpiryInterval: 0xffffffff } });
    client.once('connect', () => resolve(client));
    client.once('error', reject);
  });
}

describe('the direct ingest', () => {
  let broker: Mosquitto;
  const clients: MqttClient[] = [];
  const ingests: DirectIngest[] = [];

  before(async () => {
    broker = await startMosquitto();
  });

  after(async () => {
    for (const c of clients) c.end(true);
    await Promise.all(ingests.map((i) => i.close()));
    await broker?.stop();
  });

  function ingest(clientId: string, ring?: LogRing): DirectIngest {
    const d = new DirectIngest({
      mqttUrl: broker.url,
      clientId,
      logger: createLogger({ level: 'error', ...(ring ? { ring } : {}), destination: { write: () => true } }),
    });
    ingests.push(d);
    return d;
  }

  it('hands each message to each handler once under overlapping filters, and a retained one to every handler that subscribes', async () => {
    const device = await mqttClient(broker.url, { clientId: 'direct-cam-1' });
    clients.push(device);
    await publish(device, 'devices/direct-cam-1/status', msg.status('direct-cam-1'), { retain: true });
    const d = ingest('direct-ingest-test-1');
    const heard = { status: [] as boolean[], all: [] as string[], late: [] as boolean[] };
    await d.subscribe('devices/+/status', (_t, _p, meta) => heard.status.push(meta.retain));
    const all: MessageHandler = (topic) => heard.all.push(topic);
    await d.subscribe('devices/+/telemetry', all);
    // The same handler under a second filter that overlaps: mosquitto sends a copy per subscription.
    await d.subscribe('devices/direct-cam-1/#', all);
    await waitFor('the retained status', () => heard.status.length === 1);
    assert.deepEqual(heard.status, [true]);

    await publish(device, 'devices/direct-cam-1/telemetry', msg.telemetry());
    await waitFor('the telemetry', () => heard.all.includes('devices/direct-cam-1/telemetry'));
    await sleep(100); // a second copy would come right behind the first
    assert.deepEqual(
      heard.all.filter((t) => t.endsWith('/telemetry')),
      ['devices/direct-cam-1/telemetry'],
      'once, though two of its filters match',
    );

    // A handler subscribing later gets the retained status too, as on the bus connection.
    await d.subscribe('devices/+/status', (_t, _p, meta) => heard.late.push(meta.retain));
    await waitFor('the retained status for the later handler', () => heard.late.length === 1);
    assert.deepEqual(heard.late, [true]);
  });

  it('a handler that throws is logged and does not keep the message from the others', async () => {
    const ring = new LogRing();
    const d = ingest('direct-ingest-test-2', ring);
    const heard: string[] = [];
    await d.subscribe('devices/+/dets', () => {
      throw new Error('handler broke');
    });
    await d.subscribe('devices/+/dets', (topic) => heard.push(topic));
    const device = await mqttClient(broker.url, { clientId: 'direct-cam-2' });
    clients.push(device);
    await publish(device, 'devices/direct-cam-2/dets', msg.dets());
    await publish(device, 'devices/direct-cam-2/dets', msg.dets());
    await waitFor('both messages at the second handler', () => heard.length === 2);
    const lines = ring.tail({ lines: 50, maxBytes: 65_536 }).lines.map((l) => JSON.stringify(l));
    assert.equal(lines.filter((l) => l.includes('a device topic handler failed') && l.includes('handler broke')).length, 2, lines.join('\n'));
  });

  it('a hub on mosquitto ingests on its own session, and ends the device subscriptions an earlier run left in its bus session', async () => {
    const hubId = 'lookout-hub-direct-ingest-test';
    const busClientId = hubBusClientId(TEST_FLEET_SECRET, hubId);
    // An earlier run took the device topics on the bus connection's persistent session.
    const earlier = await persistentSession(broker.url, busClientId);
    await earlier.subscribeAsync('devices/+/dets', { qos: 1 });
    await endClient(earlier);

    const hub = await testHub({ mqttUrl: broker.url, hubId });
    try {
      const device = await mqttClient(broker.url, { clientId: 'direct-cam-3' });
      clients.push(device);
      await publish(device, 'devices/direct-cam-3/hello', msg.hello('direct-cam-3', ['127.0.0.1'], 20_000), { retain: true });
      await publish(device, 'devices/direct-cam-3/dets', { ...msg.dets(2), seq: 1 });
      await waitFor('the hub to show the dets', async () => {
        const body = (await api(hub.url, '/fleet/mqtt/latest?device=direct-cam-3')).body as { devices?: Record<string, { person_count: number | null }> };
        return body.devices?.['direct-cam-3']?.person_count === 2;
      });
    } finally {
      await hub.close();
    }

    // Both sessions outlive the hub. A dets published now would be queued for the bus session had the
    // hub not ended the earlier run's subscription there, and for the ingest session had its plugins'
    // subscriptions not been ended at their stop.
    const device = await mqttClient(broker.url, { clientId: 'direct-cam-3b' });
    clients.push(device);
    await publish(device, 'devices/direct-cam-3/dets', { ...msg.dets(1), seq: 2 });
    for (const [clientId, session] of [
      [busClientId, 'the bus session'],
      [`${busClientId}-ingest`, 'the ingest session'],
    ]) {
      const queued: string[] = [];
      const resumed = connect(broker.url, { clientId, protocolVersion: 5, clean: false, reconnectPeriod: 0, manualConnect: true });
      clients.push(resumed);
      resumed.on('message', (topic) => queued.push(topic));
      const present = await new Promise<boolean>((resolve, reject) => {
        resumed.once('connect', (connack) => resolve(connack.sessionPresent));
        resumed.once('error', reject);
        resumed.connect();
      });
      assert.equal(present, true, `${session} outlived the hub: the hub held it`);
      await sleep(300);
      assert.deepEqual(queued, [], `nothing queued on ${session} for the device topics`);
      await endClient(resumed);
    }
  });

  it('speaks MQTT over TCP or TLS only: over WebSockets the device topics stay on the bus connection', () => {
    for (const url of ['mqtt://127.0.0.1:1883', 'mqtts://broker.lan:8883', 'tcp://h:1', 'ssl://h:1']) assert.equal(DirectIngest.speaks(url), true, url);
    for (const url of ['ws://127.0.0.1:9001/mqtt', 'wss://broker.lan/mqtt', 'not a url']) assert.equal(DirectIngest.speaks(url), false, url);
  });
});
