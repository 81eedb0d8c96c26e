/**
 * The bus transport suite, run once against the embedded broker (bus-embedded.test.ts) and once
 * against a real mosquitto (bus-mosquitto.test.ts): both must behave the same for the runtime.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MqttBus, type MqttBusOptions } from '../../../lib/mqtt/mqtt-bus.js';
import { isLookoutError } from '../../../core/src/errors/lookout-error.js';
import { BusRecorder } from '../../support/bus-recorder.js';
import { waitFor } from '../../support/wait-for.js';

export interface BrokerUnderTest {
  readonly url: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface BrokerCredentials {
  username: string;
  password: string;
}

export type BrokerFactory = (options?: { auth?: BrokerCredentials }) => Promise<BrokerUnderTest>;

const willClient = fileURLToPath(new URL('../../support/will-client.js', import.meta.url));

export function busSuite(kind: string, startBroker: BrokerFactory): void {
  describe(`MqttBus against ${kind}`, () => {
    let broker: BrokerUnderTest;
    const buses: MqttBus[] = [];
    const ns = `t-${randomUUID().slice(0, 8)}`;

    const open = async (name: string, extra: Partial<MqttBusOptions> = {}, url = broker.url): Promise<MqttBus> => {
      const bus = await MqttBus.connect({
        url,
        clientId: `${ns}-${name}`,
        reconnect: { initialMs: 20, maxMs: 200 },
        connectTimeoutMs: 3_000,
        closeTimeoutMs: 500,
        ...extra,
      });
      buses.push(bus);
      return bus;
    };

    before(async () => {
      broker = await startBroker();
    });

    after(async () => {
      await Promise.all(buses.map((b) => b.close()));
      await broker.stop();
    });

    it('delivers by wildcard filters, once per handler even where filters overlap', async () => {
      const sub = await open('wild-sub');
      const pub = await open('wild-pub');
      const plus = new BusRecorder();
      const hash = new BusRecorder();
      await sub.subscribe(`${ns}/devices/+/status`, plus.handler);
      // One handler under two overlapping filters, as the hub subscribes telemetry and telemetry/#.
      await sub.subscribe(`${ns}/devices/+/telemetry`, hash.handler);
      await sub.subscribe(`${ns}/devices/+/telemetry/#`, hash.handler);

      await pub.publish(`${ns}/devices/cam-1/status`, 'a');
      await pub.publish(`${ns}/devices/cam-1/status/extra`, 'not for +');
      await pub.publish(`${ns}/devices/cam-2/telemetry`, 'b');
      await pub.publish(`${ns}/devices/cam-2/telemetry/wifi`, 'c');
      await pub.publish(`${ns}/other/cam-1/status`, 'elsewhere');
      await pub.publish(`${ns}/devices/cam-3/status`, 'end');
      await pub.publish(`${ns}/devices/cam-3/telemetry/can`, 'end');
      // One publisher, QoS 1: the sentinels arrive after everything published before them.
      await plus.until((m) => m.payload === 'end', 'status sentinel');
      await hash.until((m) => m.payload === 'end', 'telemetry sentinel');

      assert.deepEqual(plus.topics(), [`${ns}/devices/cam-1/status`, `${ns}/devices/cam-3/status`]);
      assert.deepEqual(hash.topics(), [`${ns}/devices/cam-2/telemetry`, `${ns}/devices/cam-2/telemetry/wifi`, `${ns}/devices/cam-3/telemetry/can`]);
      assert.ok(plus.messages.every((m) => !m.retain));
    });

    it('gives a late subscriber the retained message, flagged retained, and forgets it when cleared', async () => {
      const pub = await open('ret-pub');
      const topic = `${ns}/devices/cam-9/status`;
      await pub.publish(topic, JSON.stringify({ state: 'online' }), { retain: true });

      const late = await open('ret-late');
      const inbox = new BusRecorder();
      await late.subscribe(`${ns}/devices/+/status`, inbox.handler);
      const got = await inbox.until((m) => m.topic === topic, 'retained status');
      assert.deepEqual(JSON.parse(got.payload), { state: 'online' });
      assert.equal(got.retain, true);

      await pub.publish(topic, '', { retain: true });
      const later = await open('ret-later');
      const none = new BusRecorder();
      await later.subscribe(`${ns}/devices/+/status`, none.handler);
      await pub.publish(`${ns}/devices/cam-0/status`, 'sentinel');
      await none.until((m) => m.payload === 'sentinel', 'sentinel');
      assert.deepEqual(none.topics(), [`${ns}/devices/cam-0/status`]);
    });

    it('publishes the last-will when a client process is killed with SIGKILL, and not on a clean close', async () => {
      const topic = `${ns}/devices/cam-k/status`;
      const watcher = await open('will-watch');
      const inbox = new BusRecorder();
      await watcher.subscribe(topic, inbox.handler);

      const child = spawn(process.execPath, [willClient, broker.url, `${ns}-cam-k`, topic, 'offline', 'online'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
          child.once('exit', (code) => reject(new Error(`will client exited early (${code}): ${stderr}`)));
        });
        await inbox.until((m) => m.payload === 'online', 'online status');
        assert.ok(child.pid);
        process.kill(child.pid, 'SIGKILL');
        await exited;
        await inbox.until((m) => m.payload === 'offline', 'offline last-will');
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
      }
      // Retained: a subscriber arriving now still learns the device is offline.
      const late = await open('will-late');
      const lateInbox = new BusRecorder();
      await late.subscribe(topic, lateInbox.handler);
      const retained = await lateInbox.until((m) => m.topic === topic, 'retained will');
      assert.equal(retained.payload, 'offline');
      assert.equal(retained.retain, true);

      // A clean close ends the session with DISCONNECT, so the broker discards the will.
      const gracefulTopic = `${ns}/devices/cam-g/status`;
      const graceful = await MqttBus.connect({
        url: broker.url,
        clientId: `${ns}-cam-g`,
        will: { topic: gracefulTopic, payload: 'offline' },
        connectTimeoutMs: 3_000,
      });
      const gInbox = new BusRecorder();
      await watcher.subscribe(`${ns}/devices/cam-g/#`, gInbox.handler);
      await graceful.close();
      const other = await open('will-sentinel');
      await other.publish(`${ns}/devices/cam-g/sentinel`, 'after close');
      await gInbox.until((m) => m.payload === 'after close', 'sentinel after the clean close');
      assert.deepEqual(gInbox.topics(), [`${ns}/devices/cam-g/sentinel`]);
    });

    it('keeps a persistent session: QoS 1 messages sent while the client was away arrive when it returns', async () => {
      const clientId = `${ns}-persist`;
      const options = { url: broker.url, clientId, connectTimeoutMs: 3_000 };
      const first = await MqttBus.connect(options);
      await first.subscribe(`${ns}/persist/#`, () => undefined);
      assert.equal(first.stats().sessionPresent, false);
      await first.close(); // clean: false by default, so the broker keeps the session and queues for it

      const pub = await open('persist-pub');
      await pub.publish(`${ns}/persist/a`, '1');
      await pub.publish(`${ns}/persist/b`, '2');

      // Subscribing before start() lets the queued messages, sent right after CONNACK, find the handler.
      const again = MqttBus.create(options);
      buses.push(again);
      const inbox = new BusRecorder();
      const subscribed = again.subscribe(`${ns}/persist/#`, inbox.handler);
      await again.start();
      await subscribed;
      assert.equal(again.stats().sessionPresent, true);
      await inbox.until((m) => m.payload === '2', 'the second queued message');
      assert.deepEqual(
        inbox.messages.map((m) => m.payload),
        ['1', '2'],
      );
    });

    it('keeps dispatching when a handler throws, and stops delivering after unsubscribe', async () => {
      const sub = await open('throw-sub');
      const pub = await open('throw-pub');
      const good = new BusRecorder();
      await sub.subscribe(`${ns}/boom/#`, () => {
        throw new Error('handler bug');
      });
      // A handler that returns a rejected promise on purpose: the bus must count it as a handler error and go on.
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the promise in a void slot is what this test is about
      await sub.subscribe(`${ns}/boom/#`, () => Promise.reject(new Error('async handler bug')));
      const unsubscribe = await sub.subscribe(`${ns}/boom/#`, good.handler);
      await pub.publish(`${ns}/boom/1`, 'one');
      await pub.publish(`${ns}/boom/2`, 'two');
      await good.until((m) => m.payload === 'two', 'second message');
      assert.equal(good.messages.length, 2);
      await waitFor(() => sub.stats().handlerErrors === 4, 'four handler errors counted');
      assert.equal(sub.connected, true);

      await unsubscribe();
      await unsubscribe(); // idempotent
      const watch = new BusRecorder();
      await sub.subscribe(`${ns}/boom/watch`, watch.handler);
      await pub.publish(`${ns}/boom/3`, 'three');
      await pub.publish(`${ns}/boom/watch`, 'sentinel');
      await watch.until((m) => m.payload === 'sentinel', 'sentinel');
      assert.equal(good.messages.length, 2);
    });

    it('answers bad topics and a closed bus with typed errors', async () => {
      const bus = await open('typed');
      await assert.rejects(bus.publish('a/+/b', 'x'), (e) => isLookoutError(e, 'bus_topic_invalid'));
      await assert.rejects(bus.publish('', 'x'), (e) => isLookoutError(e, 'bus_topic_invalid'));
      await assert.rejects(
        bus.subscribe('a/#/b', () => undefined),
        (e) => isLookoutError(e, 'bus_topic_invalid'),
      );
      await assert.rejects(
        bus.subscribe('a/b+', () => undefined),
        (e) => isLookoutError(e, 'bus_topic_invalid'),
      );
      await bus.close();
      assert.equal(bus.connected, false);
      await assert.rejects(bus.publish('a/b', 'x'), (e) => isLookoutError(e, 'bus_closed'));
      await assert.rejects(
        bus.subscribe('a/b', () => undefined),
        (e) => isLookoutError(e, 'bus_closed'),
      );
      await bus.close(); // idempotent
    });

    it('reconnects after a broker restart, restores its subscriptions and runs onConnect again', async () => {
      const own = await startBroker();
      const restartBuses: MqttBus[] = [];
      try {
        const sub = await MqttBus.connect({ url: own.url, clientId: `${ns}-rs-sub`, reconnect: { initialMs: 20, maxMs: 200 }, connectTimeoutMs: 3_000 });
        restartBuses.push(sub);
        let connects = 0;
        sub.onConnect(() => connects++);
        await waitFor(() => connects === 1, 'onConnect for the current connection');
        const inbox = new BusRecorder();
        await sub.subscribe(`${ns}/cmd/#`, inbox.handler);

        await own.restart(); // no persistence: the broker forgot the session and the subscription
        await waitFor(() => connects === 2, 'onConnect after the restart', 8_000);
        assert.equal(sub.connected, true);
        assert.equal(sub.stats().connects, 2);

        const pub = await MqttBus.connect({ url: own.url, clientId: `${ns}-rs-pub`, connectTimeoutMs: 3_000 });
        restartBuses.push(pub);
        await pub.publish(`${ns}/cmd/reboot`, 'after restart');
        await inbox.until((m) => m.payload === 'after restart', 'a message through the restored subscription');
        await sub.publish(`${ns}/cmd/echo`, 'own publish');
        await inbox.until((m) => m.payload === 'own publish', 'the restarted bus publishing');
      } finally {
        await Promise.all(restartBuses.map((b) => b.close()));
        await own.stop();
      }
    });

    it('requires credentials when the broker has them set', async () => {
      const auth = { username: 'hub-device', password: `tok-${randomUUID()}` };
      const secured = await startBroker({ auth });
      try {
        const ok = await MqttBus.connect({ url: secured.url, clientId: `${ns}-auth-ok`, ...auth, connectTimeoutMs: 3_000 });
        assert.equal(ok.connected, true);
        await ok.close();

        const wrong = MqttBus.connect({ url: secured.url, clientId: `${ns}-auth-bad`, username: auth.username, password: 'wrong', connectTimeoutMs: 3_000 });
        await assert.rejects(
          wrong,
          (e) => isLookoutError(e, 'bus_auth_refused') && [4, 5, 0x86, 0x87].includes((e.details as { returnCode: number }).returnCode),
        );
        const missing = MqttBus.connect({ url: secured.url, clientId: `${ns}-auth-none`, connectTimeoutMs: 3_000 });
        await assert.rejects(missing, (e) => isLookoutError(e, 'bus_auth_refused'));
        // The password never appears in the error a caller might log.
        await assert.rejects(
          MqttBus.connect({ url: secured.url, clientId: `${ns}-auth-leak`, username: auth.username, password: 'p-leak-42', connectTimeoutMs: 3_000 }),
          (e) => isLookoutError(e) && !JSON.stringify({ m: e.message, d: e.details }).includes('p-leak-42'),
        );
      } finally {
        await secured.stop();
      }
    });
  });
}
