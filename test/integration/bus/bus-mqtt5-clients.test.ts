/**
 * MQTT 5 clients no one on the project wrote, against the hub's default (embedded) broker: paho-mqtt
 * (Debian's python3-paho-mqtt, MQTTv5) and mosquitto_sub -V mqttv5 (mosquitto-clients), both
 * installed by scripts/setup-system.sh. Before, the broker answered their CONNECT with 0x84
 * "unsupported protocol version". The bus identity holds under 5 as under 3.1.1, the devices' own
 * MqttBus speaks 5, and a bus falls back to 3.1.1 against a broker that speaks no 5 (aedes 1.2).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Aedes } from 'aedes-mqtt311';
import { OPERATOR_BUS_USER, busPassword } from '../../../lib/auth/bus-acl.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { BusRecorder } from '../../support/bus-recorder.js';
import { testHub, TEST_FLEET_SECRET } from '../../support/hub-helpers.js';

const PAHO = fileURLToPath(new URL('../../../../test/support/paho-mqtt5.py', import.meta.url));
/** Debian's python3, where python3-paho-mqtt is installed (a python3 earlier on PATH may lack it). */
const PYTHON = '/usr/bin/python3';
const operator = { username: OPERATOR_BUS_USER, password: busPassword(TEST_FLEET_SECRET, OPERATOR_BUS_USER) };
const device = (id: string) => ({ username: id, password: busPassword(TEST_FLEET_SECRET, id) });

type PahoEvent = { event: string; reason?: number; reasons?: number[]; topic?: string; payload?: string; properties?: Record<string, unknown> };

interface PahoRun {
  /** Resolves at the given event (or rejects when paho ends first). */
  until(event: string): Promise<PahoEvent>;
  /** Every event, once paho has exited. */
  done: Promise<PahoEvent[]>;
}

/** Runs paho-mqtt (MQTT 5) with the arguments test/support/paho-mqtt5.py reads. */
function paho(hub: RunningHub, args: Record<string, unknown>): PahoRun {
  const child = spawn(PYTHON, [PAHO, JSON.stringify({ host: '127.0.0.1', port: hub.brokerPort, timeout: 10, ...args })], { stdio: ['ignore', 'pipe', 'pipe'] });
  const events: PahoEvent[] = [];
  const waiters: { event: string; resolve: (e: PahoEvent) => void }[] = [];
  let stderr = '';
  let buffered = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const e = JSON.parse(buffered.slice(0, nl)) as PahoEvent;
      buffered = buffered.slice(nl + 1);
      events.push(e);
      for (const w of waiters.filter((w) => w.event === e.event)) w.resolve(e);
    }
  });
  const done = new Promise<PahoEvent[]>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(events) : reject(new Error(`paho exited ${code}: ${stderr}`)))),
  );
  return {
    until: (event) =>
      new Promise((resolve, reject) => {
        const seen = events.find((e) => e.event === event);
        if (seen) return resolve(seen);
        waiters.push({ event, resolve });
        done.then(() => reject(new Error(`paho ended without ${event}: ${JSON.stringify(events)}`)), reject);
      }),
    done,
  };
}

describe('MQTT 5 clients on the default broker', () => {
  let hub: RunningHub;
  const buses: MqttBus[] = [];
  const deviceBus = async (id: string) => {
    const bus = await MqttBus.connect({ url: hub.brokerUrl, clientId: id, ...device(id), connectTimeoutMs: 5_000 });
    buses.push(bus);
    return bus;
  };

  before(async () => {
    hub = await testHub({ anonymousBroker: false });
  });
  after(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await hub.close();
  });

  it('paho connects over MQTT 5 as the operator and reads a device’s telemetry, which the device sent over 5', async () => {
    const tap = paho(hub, { client_id: 'lookout-tap-paho', ...operator, subscribe: 'devices/+/telemetry', messages: 1 });
    assert.equal((await tap.until('connack')).reason, 0);
    assert.deepEqual((await tap.until('suback')).reasons, [1]);
    const cam = await deviceBus('cam-p5');
    assert.equal(cam.stats().protocolVersion, 5);
    await cam.publish('devices/cam-p5/telemetry', JSON.stringify({ fps: 10 }));
    const message = await tap.until('message');
    assert.equal(message.topic, 'devices/cam-p5/telemetry');
    assert.deepEqual(JSON.parse(message.payload ?? ''), { fps: 10 });
    await tap.done;
  });

  it('carries MQTT 5 request/response properties from paho to mosquitto_sub -V mqttv5', async () => {
    const cam = device('cam-rr');
    const reader = spawn(
      'mosquitto_sub',
      [
        '-V',
        'mqttv5',
        '-h',
        '127.0.0.1',
        '-p',
        String(hub.brokerPort),
        '-i',
        'cam-rr',
        '-u',
        cam.username,
        '-P',
        cam.password,
        '-t',
        'devices/cam-rr/cmd/#',
        '-C',
        '1',
        '-W',
        '10',
        '-F',
        '%t|%R|%D|%p',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    reader.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => reader.once('exit', resolve));
    // mosquitto_sub says nothing once subscribed: ask (a fresh paho each time) until it has read one.
    const ask = { topic: 'devices/cam-rr/cmd/ptz', payload: '{"pan":1}', response_topic: 'lookout/replies/asker', correlation: 'req-42' };
    const deadline = Date.now() + 8_000;
    while (!out && Date.now() < deadline) {
      await paho(hub, { client_id: 'lookout-tap-asker', ...operator, publish: ask }).done;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(await exited, 0);
    assert.equal(out.trim().split('\n')[0], 'devices/cam-rr/cmd/ptz|lookout/replies/asker|req-42|{"pan":1}');
  });

  it('keeps the bus identity under MQTT 5: another device’s client id, an empty one and another’s topics are refused', async () => {
    const impostor = await paho(hub, { client_id: 'cam-victim', ...device('cam-thief') }).done;
    assert.ok((impostor.find((e) => e.event === 'connack')?.reason ?? 0) >= 0x80, JSON.stringify(impostor));
    const anonymousId = await paho(hub, { client_id: '', ...device('cam-thief') }).done;
    assert.ok((anonymousId.find((e) => e.event === 'connack')?.reason ?? 0) >= 0x80, JSON.stringify(anonymousId));
    const wrongPassword = await paho(hub, { client_id: 'cam-thief', username: 'cam-thief', password: 'guess' }).done;
    assert.equal(wrongPassword.find((e) => e.event === 'connack')?.reason, 0x86);
    const snooping = await paho(hub, { client_id: 'cam-thief', ...device('cam-thief'), subscribe: 'devices/cam-victim/cmd/#' }).done;
    assert.deepEqual(snooping.find((e) => e.event === 'suback')?.reasons, [0x87]);
  });

  it('speaks 3.1.1 to a broker that speaks no 5 (aedes 1.2), after its refusal', async () => {
    const old = await Aedes.createBroker();
    const server = createServer(old.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const a = await MqttBus.connect({ url, clientId: 'old-a', connectTimeoutMs: 5_000 });
      const b = await MqttBus.connect({ url, clientId: 'old-b', connectTimeoutMs: 5_000 });
      buses.push(a, b);
      assert.equal(a.stats().protocolVersion, 4);
      const inbox = new BusRecorder();
      await a.subscribe('devices/+/status', inbox.handler);
      await a.subscribe('devices/#', inbox.handler);
      await b.publish('devices/old-b/status', 'online');
      await inbox.until((m) => m.payload === 'online', 'status over 3.1.1');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(inbox.messages.length, 1);
    } finally {
      await Promise.all(buses.splice(-2).map((bus) => bus.close()));
      await new Promise<void>((resolve) => old.close(() => resolve()));
      server.close();
    }
  });
});
