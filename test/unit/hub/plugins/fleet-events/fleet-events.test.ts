/**
 * GET /fleet/events and GET /fleet/history in a real hub (embedded broker, messages published by a
 * real MQTT client): presence, cards, thermal changes, incidents, ring events and history samples
 * arrive as SSE events; filters by device and kind hold; bad input is a 400, an unknown device a 404.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import { loadHubPluginSet } from '../../../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import fleetEvents from '../../../../../hub/plugins/fleet-events/src/index.js';
import fleetHistory from '../../../../../hub/plugins/fleet-history/src/index.js';
import { api, callTool, endClient, mqttClient, msg, publish, testHub } from '../../../../support/hub-helpers.js';
import { freePort } from '../../../../support/free-port.js';
import { SseReader } from './sse-reader.js';

describe('fleet events (SSE) and history', () => {
  let hub: RunningHub;
  let client: MqttClient;
  const readers: SseReader[] = [];
  const open = async (query = '') => {
    const r = new SseReader(`${hub.url}/fleet/events${query}`);
    readers.push(r);
    await r.opened();
    return r;
  };

  before(async () => {
    const set = await loadHubPluginSet();
    const plugins = [...set.plugins.filter((p) => !['fleet-events', 'fleet-history', 'console', 'live-mp4'].includes(p.name)), fleetHistory, fleetEvents];
    hub = await testHub({
      plugins,
      essential: set.essential,
      toolTimeoutMs: 1000,
      env: { LOOKOUT_EVENTS_POLL_MS: '100', LOOKOUT_EVENTS_DEVICE_INTERVAL_MS: '200', LOOKOUT_HISTORY_STEP_MS: '100', READINESS_START_DELAY_MS: '600000' },
    });
    client = await mqttClient(hub.brokerUrl);
    // Nothing listens on cam-b's tool port: a tool call fails and the ring records it.
    await publish(client, 'devices/cam-a/hello', msg.hello('cam-a', ['127.0.0.1'], await freePort()));
    await publish(client, 'devices/cam-b/hello', msg.hello('cam-b', ['127.0.0.1'], await freePort(), ['lobby']));
  });

  after(async () => {
    await Promise.all(readers.map((r) => r.close()));
    if (client) await endClient(client);
    await hub?.close();
  });

  it('answers text/event-stream and tells the client how long to wait before reconnecting', async () => {
    const r = await open();
    assert.equal(r.status, 200);
    assert.match(r.headers?.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(r.headers?.get('cache-control'), 'no-cache, no-transform');
  });

  it('sends presence and a card when a device comes online and goes offline', async () => {
    const r = await open();
    await publish(client, 'devices/cam-a/status', msg.status('cam-a', 'online', 51), { retain: true });
    await publish(client, 'devices/cam-a/telemetry', msg.telemetry(51, 9));
    const online = await r.next('presence', (d: any) => d.device_id === 'cam-a' && d.presence === 'online');
    assert.equal(online.online, true);
    const card = await r.next('device', (d: any) => d.device_id === 'cam-a' && d.detection_fps === 9);
    assert.equal(card.presence, 'online');
    assert.equal(card.die_temp_c, 51);
    assert.equal(card.role, 'front_door');
    await publish(client, 'devices/cam-a/status', msg.status('cam-a', 'offline'), { retain: true });
    const offline = await r.next('presence', (d: any) => d.device_id === 'cam-a' && d.presence === 'offline');
    assert.equal(offline.previous, 'online');
    assert.equal(typeof offline.offline_since, 'string');
    const offCard = await r.next('device', (d: any) => d.device_id === 'cam-a' && d.presence === 'offline');
    assert.equal(offCard.online, false);
  });

  it('sends thermal changes and incidents', async () => {
    const r = await open('?kind=thermal,incident');
    await publish(client, 'devices/cam-b/status', msg.status('cam-b', 'online', 60));
    await publish(client, 'devices/cam-b/status', { ...msg.status('cam-b', 'online', 88), thermal_state: 'THERMAL_WARN' });
    const t = await r.next('thermal', (d: any) => d.device_id === 'cam-b');
    assert.deepEqual([t.from, t.to, t.die_temp_c], ['NORMAL', 'THERMAL_WARN', 88]);
    await publish(client, 'devices/cam-b/events/incident', msg.incident('person at the gate'));
    const i = await r.next('incident', (d: any) => d.device_id === 'cam-b');
    assert.equal(i.message.message, 'person at the gate');
    assert.equal(i.topic, 'devices/cam-b/events/incident');
    assert.ok(!r.events.some((e) => e.event === 'device' || e.event === 'presence'), r.names());
  });

  it('forwards debug ring events, and a device filter keeps other devices out', async () => {
    const onlyA = await open('?device=cam-a&kind=ring,device');
    const all = await open('?kind=ring');
    const failed = await callTool(hub.url, 'cam-b', 'get_system_health');
    assert.notEqual(failed.status, 200);
    const e = await all.next('ring', (d: any) => d.kind === 'tool_error' && d.device_id === 'cam-b' && /get_system_health/.test(d.message));
    assert.match(e.message, /get_system_health/);
    await publish(client, 'devices/cam-b/telemetry', msg.telemetry(60, 7));
    await publish(client, 'devices/cam-a/telemetry', msg.telemetry(50, 6));
    await onlyA.next('device', (d: any) => d.device_id === 'cam-a');
    assert.ok(!onlyA.events.some((ev) => (JSON.parse(ev.data) as { device_id?: string }).device_id === 'cam-b'), onlyA.names());
  });

  it('sends detections only to clients that ask for them', async () => {
    const dets = await open('?device=cam-a&kind=dets');
    const plain = await open('?device=cam-a');
    const frame = { captured_at: '2026-11-26T10:00:00.050Z', frame_width: 640, frame_height: 640 };
    await publish(client, 'devices/cam-a/dets', { ...msg.dets(2, 40), ...frame });
    const d = await dets.next('dets', (x: any) => x.device_id === 'cam-a');
    // What the console needs to pair the boxes with a snapshot and put them on it travels with them.
    assert.deepEqual([d.captured_at, d.frame_width, d.frame_height], [frame.captured_at, 640, 640]);
    assert.deepEqual(
      d.dets.map((x: { track_id: number }) => x.track_id),
      [40, 41],
    );
    assert.equal(d.person_count, 2);
    await publish(client, 'devices/cam-a/telemetry', msg.telemetry(50, 6));
    await plain.next('device');
    assert.ok(!plain.events.some((e) => e.event === 'dets'));
  });

  it('keeps a bounded history per device and streams its samples', async () => {
    const r = await open('?device=cam-a&kind=sample');
    const t0 = Date.now();
    await publish(client, 'devices/cam-a/dets', msg.dets(3));
    await publish(client, 'devices/cam-a/telemetry', msg.telemetry(55.5, 8));
    const s = await r.next('sample', (d: any) => d.sample.die_temp_c === 55.5);
    assert.equal(s.sample.detection_fps, 8);
    const h = await api(hub.url, `/fleet/history?device=cam-a&since=${t0 - 1}`);
    assert.equal(h.status, 200, h.text);
    assert.equal(h.body.window_s, 3600);
    const last = h.body.samples.at(-1);
    assert.equal(last.die_temp_c, 55.5);
    assert.equal(last.person_count, 3);
    assert.ok(h.body.samples.every((x: { t: number }) => x.t > t0 - 1));
  });

  it('refuses bad filters with 400 naming the field, and an unknown device with 404', async () => {
    for (const [path, field] of [
      ['/fleet/events?kind=weather', 'query.kind'],
      ['/fleet/events?device=a%2Fb', 'query.device'],
      ['/fleet/history', 'query.device'],
      ['/fleet/history?device=cam-a&since=1e3', 'query.since'],
    ]) {
      const r = await api(hub.url, path);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.equal(r.body.error.details.field, field);
    }
    assert.equal((await api(hub.url, '/fleet/events?device=cam-zz')).status, 404);
    assert.equal((await api(hub.url, '/fleet/history?device=cam-zz')).status, 404);
  });

  it('is documented in OpenAPI as an event stream with its parameters', async () => {
    const doc = (await api(hub.url, '/openapi.json')).body;
    const op = doc.paths['/fleet/events'].get;
    assert.ok(op.responses['200'].content['text/event-stream'], JSON.stringify(op.responses['200']));
    assert.deepEqual(op.parameters.map((p: { name: string }) => p.name).sort(), ['device', 'kind']);
    assert.ok(op.parameters.find((p: { name: string }) => p.name === 'kind').schema.items.enum.includes('presence'));
  });
});
