/**
 * Two real `lookout-edge` processes (different images and layers) on a real broker, run once against
 * the embedded broker (device-fleet-embedded.test.ts) and once against mosquitto
 * (device-fleet-mosquitto.test.ts): retained status, hello and health, commands over the bus,
 * garbage on cmd topics, a broker restart under running devices, the last-will of a killed device
 * and the offline status of a stopped one.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { HealthMessageSchema } from '../../../core/src/contracts/health-message.js';
import { HelloMessageSchema } from '../../../core/src/contracts/hello-message.js';
import { ResponseMessageSchema } from '../../../core/src/contracts/responses-message.js';
import { StatusMessageSchema } from '../../../core/src/contracts/status-message.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { BusRecorder } from '../../support/bus-recorder.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { waitFor } from '../../support/wait-for.js';

export interface FleetBroker {
  readonly url: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const fixtureImage = (name: string) => join(packageRoot(), 'test', 'fixtures', 'images', `${name}.json`);

export function deviceFleetSuite(name: string, startBroker: () => Promise<FleetBroker>): void {
  describe(`two devices on ${name}`, () => {
    const tag = randomUUID().slice(0, 6);
    const idA = `cam-a-${tag}`;
    const idB = `cam-b-${tag}`;
    const env = { HEALTH_INTERVAL_MS: '300', STATUS_INTERVAL_MS: '60000' };
    let broker: FleetBroker;
    let observer: MqttBus;
    const inbox = new BusRecorder(8_000);
    let a: DeviceProcess;
    let b: DeviceProcess;

    before(async () => {
      broker = await startBroker();
      observer = await MqttBus.connect({
        url: broker.url,
        clientId: `observer-${tag}`,
        clean: true,
        reconnect: { initialMs: 50, maxMs: 300 },
        connectTimeoutMs: 5_000,
      });
      await observer.subscribe('devices/#', inbox.handler, { qos: 1 });
      [a, b] = await Promise.all([
        startDeviceProcess({ deviceId: idA, mqtt: broker.url, image: fixtureImage('base-camera'), layer: 'layer0', role: 'front-door', env }),
        startDeviceProcess({
          deviceId: idB,
          mqtt: broker.url,
          image: fixtureImage('base-precision'),
          layerEnv: join(packageRoot(), 'configs', 'layers', 'layer2_tracker.env'),
          env,
        }),
      ]);
    });

    after(async () => {
      await Promise.all([a?.kill(), b?.kill()]);
      await observer?.close();
      await broker?.stop();
    });

    it('prints a ready line with the device id and its tool port', () => {
      assert.equal(a.ready.device_id, idA);
      assert.equal(a.ready.layer, 'layer0');
      assert.equal(a.ready.image, 'base-camera');
      assert.equal(b.ready.layer, 'layer2');
      assert.equal(b.ready.image, 'base-precision');
      assert.ok(a.ready.ports.tools > 0 && b.ready.ports.tools !== a.ready.ports.tools);
    });

    it('announces hello with addresses and ports, and publishes health periodically', async () => {
      for (const [device, id, labels, roles] of [
        [a, idA, ['front-door'], ['camera']],
        [b, idB, ['precision'], ['precision']],
      ] as const) {
        const hello = HelloMessageSchema.parse((await inbox.until((m) => m.topic === `devices/${id}/hello`, `hello of ${id}`)).body);
        assert.equal(hello.ports.tools, device.ready.ports.tools);
        assert.deepEqual(hello.labels, labels);
        assert.deepEqual(hello.roles, roles);
        assert.equal(hello.layer, device.ready.layer);
        assert.ok(hello.ips.includes('127.0.0.1'));
        const first = await inbox.until((m) => m.topic === `devices/${id}/health`, `health of ${id}`);
        HealthMessageSchema.parse(first.body);
        const second = await inbox.until((m) => m.topic === `devices/${id}/health`, `second health of ${id}`, { after: first.seq });
        assert.equal(HealthMessageSchema.parse(second.body).storage_health, 'OK');
      }
    });

    it('keeps the online status retained for late subscribers', async () => {
      const late = await MqttBus.connect({ url: broker.url, clientId: `late-${tag}`, clean: true, connectTimeoutMs: 5_000 });
      try {
        const got = new Map<string, { retain: boolean; body: Record<string, unknown> }>();
        await late.subscribe('devices/+/status', (topic, payload, meta) =>
          got.set(topic, { retain: meta.retain, body: JSON.parse(payload.toString()) as Record<string, unknown> }),
        );
        await waitFor(() => got.size >= 2, 'two retained statuses');
        for (const id of [idA, idB]) {
          const status = got.get(`devices/${id}/status`)!;
          assert.equal(status.retain, true);
          const parsed = StatusMessageSchema.parse(status.body);
          assert.equal(parsed.state, 'online');
          assert.equal(parsed.thermal_state, 'NORMAL');
        }
      } finally {
        await late.close();
      }
    });

    it('answers a tool command on the bus', async () => {
      const mark = inbox.mark;
      await observer.publish(`devices/${idB}/cmd/tool`, JSON.stringify({ tool: 'get_device_identity', arguments: {}, request_id: `id-${tag}` }));
      const reply = await inbox.until((m) => m.topic === `devices/${idB}/responses` && m.body.request_id === `id-${tag}`, 'tool reply', { after: mark });
      const parsed = ResponseMessageSchema.parse(reply.body) as { ok?: boolean; result?: { device_id: string; listen_ports: Record<string, number> } };
      assert.equal(parsed.ok, true);
      assert.equal(parsed.result?.device_id, idB);
      assert.equal(parsed.result?.listen_ports.tools, b.ready.ports.tools);
    });

    it('survives garbage on cmd topics, answering errors and still serving commands', async () => {
      const mark = inbox.mark;
      const garbage: (string | Buffer)[] = [
        Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00]),
        'null',
        '"text"',
        '[]',
        '{"tool":',
        JSON.stringify({ tool: '' }),
        JSON.stringify({ tool: 'x', arguments: 'nope' }),
        'x'.repeat(100_000),
      ];
      for (const g of garbage) await observer.publish(`devices/${idA}/cmd/tool`, g);
      await observer.publish(`devices/${idA}/cmd/%%weird`, '{}');
      await observer.publish(`devices/${idA}/cmd/deep/nested/topic`, JSON.stringify({ request_id: `deep-${tag}` }));
      const refused = await inbox.until((m) => m.topic === `devices/${idA}/responses` && m.body.request_id === `deep-${tag}`, 'error reply', { after: mark });
      assert.equal(refused.body.ok, false);
      const refusal = refused.body.error as { code: string; message: string };
      assert.equal(refusal.code, 'command_invalid');
      assert.match(refusal.message, /unknown command "deep\/nested\/topic"/);
      await observer.publish(`devices/${idA}/cmd/ping`, JSON.stringify({ request_id: `ping-${tag}` }));
      await inbox.until((m) => m.topic === `devices/${idA}/responses` && m.body.request_id === `ping-${tag}`, 'pong', { after: mark });
      const errors = inbox.messages.filter((m) => m.seq > mark && m.topic === `devices/${idA}/responses` && m.body.kind === 'error');
      assert.ok(errors.length >= garbage.length, `an error reply per garbage message (got ${errors.length})`);
      assert.equal(a.child.exitCode, null);
      assert.match(a.logs(), /invalid command ignored/);
    });

    it('reconnects after a broker restart and announces itself again', async () => {
      const mark = inbox.mark;
      await broker.restart();
      for (const id of [idA, idB]) {
        await inbox.until((m) => m.topic === `devices/${id}/hello`, `hello of ${id} after the restart`, { after: mark, timeoutMs: 15_000 });
        // mosquitto sends the wills of its clients when it shuts down, so an offline may come first.
        const status = await inbox.until((m) => m.topic === `devices/${id}/status` && m.body.state === 'online', `online status of ${id} after the restart`, {
          after: mark,
          timeoutMs: 15_000,
        });
        StatusMessageSchema.parse(status.body);
        assert.equal(status.body.reason, 'connect');
      }
      // Still serving commands on the new connection.
      await observer.publish(`devices/${idA}/cmd/ping`, JSON.stringify({ request_id: `again-${tag}` }));
      await inbox.until((m) => m.topic === `devices/${idA}/responses` && m.body.request_id === `again-${tag}`, 'pong after the restart', { after: mark });
    });

    it('shows a device killed with SIGKILL as offline through its last-will', async () => {
      const mark = inbox.mark;
      const exit = await a.kill();
      assert.equal(exit.signal, 'SIGKILL');
      const will = await inbox.until((m) => m.topic === `devices/${idA}/status` && m.body.state === 'offline', 'the last-will', { after: mark });
      const parsed = StatusMessageSchema.parse(will.body);
      assert.equal(parsed.device_id, idA);
      assert.equal(will.body.reason, 'connection_lost');
      assert.equal(await retainedStatus(broker.url, idA, tag), 'offline');
    });

    it('publishes a retained offline status itself on SIGTERM and exits 0', async () => {
      const mark = inbox.mark;
      const exit = await b.stop();
      assert.equal(exit.code, 0, b.logs().split('\n').slice(-20).join('\n'));
      const offline = await inbox.until((m) => m.topic === `devices/${idB}/status` && m.body.state === 'offline', 'offline status', { after: mark });
      assert.equal(offline.body.reason, 'shutdown');
      assert.equal(await retainedStatus(broker.url, idB, tag), 'offline');
    });
  });
}

async function retainedStatus(url: string, id: string, tag: string): Promise<string> {
  const probe = await MqttBus.connect({ url, clientId: `probe-${id}-${tag}`, clean: true, connectTimeoutMs: 5_000 });
  try {
    let state: string | undefined;
    await probe.subscribe(`devices/${id}/status`, (_t, payload, meta) => {
      if (meta.retain) state = (JSON.parse(payload.toString()) as { state: string }).state;
    });
    await waitFor(() => state !== undefined, `retained status of ${id}`);
    return state!;
  } finally {
    await probe.close();
  }
}
