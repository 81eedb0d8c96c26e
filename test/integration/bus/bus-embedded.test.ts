import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { isLookoutError } from '../../../core/src/errors/lookout-error.js';
import { busSuite, type BrokerUnderTest } from './bus-suite.js';
import { waitFor } from '../../support/wait-for.js';

busSuite('the embedded broker (aedes)', async (options = {}) => {
  const auth = options.auth;
  let broker = await EmbeddedBroker.start({ port: 0, ...(auth ? { auth } : {}) });
  const port = broker.port;
  const handle: BrokerUnderTest = {
    url: broker.url,
    async restart() {
      await broker.close();
      broker = await EmbeddedBroker.start({ port, ...(auth ? { auth } : {}) });
    },
    stop: () => broker.close(),
  };
  return handle;
});

describe('EmbeddedBroker', () => {
  it('acknowledges an oversized publish but neither delivers nor retains it', async () => {
    const broker = await EmbeddedBroker.start({ port: 0, maxPayloadBytes: 1024 });
    const buses: MqttBus[] = [];
    try {
      const sub = await MqttBus.connect({ url: broker.url, clientId: 'big-sub', connectTimeoutMs: 3_000 });
      const pub = await MqttBus.connect({ url: broker.url, clientId: 'big-pub', connectTimeoutMs: 3_000 });
      buses.push(sub, pub);
      const got: string[] = [];
      await sub.subscribe('big/#', (topic) => got.push(topic));
      await pub.publish('big/keep', 'small', { retain: true });
      await pub.publish('big/keep', Buffer.alloc(4096, 1), { retain: true });
      await pub.publish('big/sentinel', 'end');
      await waitFor(() => got.includes('big/sentinel'), 'the sentinel');
      assert.deepEqual(got, ['big/keep', 'big/sentinel']);
      assert.equal(pub.connected, true);

      // The valid retained message was not replaced by the oversized one.
      const late = await MqttBus.connect({ url: broker.url, clientId: 'big-late', connectTimeoutMs: 3_000 });
      buses.push(late);
      const retained: string[] = [];
      await late.subscribe('big/keep', (_t, payload) => retained.push(payload.toString()));
      await waitFor(() => retained.length > 0, 'the retained message');
      assert.deepEqual(retained, ['small']);
    } finally {
      await Promise.all(buses.map((b) => b.close()));
      await broker.close();
    }
  });

  it('fails to start with broker_start_failed when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    assert.ok(address && typeof address === 'object');
    try {
      await assert.rejects(EmbeddedBroker.start({ port: address.port }), (e) => isLookoutError(e, 'broker_start_failed'));
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('rejects connect with bus_unreachable when nothing listens, and config_invalid for a bad url', async () => {
    await assert.rejects(MqttBus.connect({ url: 'foo://127.0.0.1:1', clientId: 'bad-url' }), (e) => isLookoutError(e, 'config_invalid'));
    await assert.rejects(MqttBus.connect({ url: '127.0.0.1:1883', clientId: 'bad-url' }), (e) => isLookoutError(e, 'config_invalid'));
    const broker = await EmbeddedBroker.start({ port: 0 });
    const url = broker.url;
    await broker.close(); // the port is now closed
    await assert.rejects(MqttBus.connect({ url, clientId: 'nobody', connectTimeoutMs: 300, reconnect: { initialMs: 20, maxMs: 50 } }), (e) =>
      isLookoutError(e, 'bus_unreachable'),
    );
  });

  it('connects a bus created before the broker exists once the broker starts, with its subscription', async () => {
    const probe = await EmbeddedBroker.start({ port: 0 });
    const port = probe.port;
    await probe.close();
    const bus = MqttBus.create({ url: `mqtt://127.0.0.1:${port}`, clientId: 'early', reconnect: { initialMs: 20, maxMs: 100 }, connectTimeoutMs: 5_000 });
    const got: string[] = [];
    const subscribed = bus.subscribe('early/#', (topic) => got.push(topic));
    const started = bus.start();
    await new Promise((resolve) => setTimeout(resolve, 150)); // a few refused attempts first
    const broker = await EmbeddedBroker.start({ port });
    try {
      await started;
      await subscribed;
      const pub = await MqttBus.connect({ url: broker.url, clientId: 'early-pub', connectTimeoutMs: 3_000 });
      await pub.publish('early/x', '1');
      await waitFor(() => got.length === 1, 'the message on early/x');
      await pub.close();
    } finally {
      await bus.close();
      await broker.close();
    }
  });
});

describe('MqttBus close during start', () => {
  it('settles a pending connect with bus_closed at once when closed', async () => {
    const probe = await EmbeddedBroker.start({ port: 0 });
    const url = probe.url;
    await probe.close();
    const bus = MqttBus.create({ url, clientId: 'closing-early', connectTimeoutMs: 10_000, reconnect: { initialMs: 20, maxMs: 50 } });
    const started = bus.start();
    await new Promise((resolve) => setTimeout(resolve, 60));
    await bus.close();
    await assert.rejects(started, (e) => isLookoutError(e, 'bus_closed'));
  });
});
