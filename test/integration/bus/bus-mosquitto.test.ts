import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { isLookoutError } from '../../../core/src/errors/lookout-error.js';
import { startMosquitto } from '../../support/mosquitto.js';
import { waitFor } from '../../support/wait-for.js';
import { busSuite } from './bus-suite.js';

busSuite('mosquitto', async (options = {}) => {
  const auth = options.auth;
  return startMosquitto(auth ? { users: { [auth.username]: auth.password } } : {});
});

describe('MqttBus against mosquitto with persistence', () => {
  it('resumes the session after a broker restart without re-subscribing, and keeps retained status', async () => {
    const mosquitto = await startMosquitto({ persistence: true });
    const buses: MqttBus[] = [];
    try {
      const sub = await MqttBus.connect({ url: mosquitto.url, clientId: 'persist-sub', reconnect: { initialMs: 20, maxMs: 200 }, connectTimeoutMs: 3_000 });
      buses.push(sub);
      let connects = 0;
      sub.onConnect(() => connects++);
      const got: string[] = [];
      await sub.subscribe('fleet/+/cmd', (_t, payload) => got.push(payload.toString()));
      await sub.publish('fleet/cam-1/status', 'online', { retain: true });

      await mosquitto.restart();
      await waitFor(() => connects === 2, 'the reconnect after the restart', 8_000);
      assert.equal(sub.stats().sessionPresent, true);

      const pub = await MqttBus.connect({ url: mosquitto.url, clientId: 'persist-pub', connectTimeoutMs: 3_000 });
      buses.push(pub);
      await pub.publish('fleet/cam-1/cmd', 'ping');
      await waitFor(() => got.includes('ping'), 'ping through the resumed session');
      const retained: string[] = [];
      await pub.subscribe('fleet/+/status', (_t, payload) => retained.push(payload.toString()));
      await waitFor(() => retained.length === 1, 'the retained status');
      assert.deepEqual(retained, ['online']);
    } finally {
      await Promise.all(buses.map((b) => b.close()));
      await mosquitto.stop();
    }
  });

  it('acknowledges every message of a burst: the acknowledgements sent together are never held back', async () => {
    // mosquitto sends at most 20 unacknowledged messages to a client: an acknowledgement left in a
    // corked socket would stop the burst there.
    const mosquitto = await startMosquitto();
    const buses: MqttBus[] = [];
    try {
      const sub = await MqttBus.connect({ url: mosquitto.url, clientId: 'burst-sub', connectTimeoutMs: 3_000 });
      buses.push(sub);
      const got: number[] = [];
      await sub.subscribe('burst/+', (_t, payload) => got.push(Number(payload.toString())));
      const pub = await MqttBus.connect({ url: mosquitto.url, clientId: 'burst-pub', connectTimeoutMs: 3_000 });
      buses.push(pub);
      // In waves below mosquitto's per-client queue (1 000 by default, beyond which it drops QoS 1
      // messages for a client that falls behind, as a loaded test machine may).
      const n = 2000;
      const wave = 400;
      for (let start = 0; start < n; start += wave) {
        await Promise.all(Array.from({ length: wave }, (_, i) => pub.publish('burst/a', String(start + i), { qos: 1 })));
        await waitFor(() => got.length === start + wave, `messages up to ${start + wave}`, 10_000);
      }
      assert.deepEqual(
        got,
        Array.from({ length: n }, (_, i) => i),
      );
      // And a lone message after the burst, which no later packet would flush.
      await pub.publish('burst/a', 'last', { qos: 1 });
      await waitFor(() => got.length === n + 1, 'the lone message after the burst');
    } finally {
      await Promise.all(buses.map((b) => b.close()));
      await mosquitto.stop();
    }
  });

  it('starts on a given port, refuses anonymous clients when users are set, and stops only its own process', async () => {
    const mosquitto = await startMosquitto({ users: { dev: 'pw-1' } });
    const port = mosquitto.port;
    const pid = mosquitto.pid;
    assert.ok(pid);
    await assert.rejects(MqttBus.connect({ url: mosquitto.url, clientId: 'anon', connectTimeoutMs: 2_000 }), (e) => isLookoutError(e, 'bus_auth_refused'));
    await mosquitto.stop();
    assert.throws(() => process.kill(pid, 0)); // gone
    const again = await startMosquitto({ port });
    try {
      assert.equal(again.port, port);
      const bus = await MqttBus.connect({ url: again.url, clientId: 'anon-ok', connectTimeoutMs: 2_000 });
      await bus.close();
    } finally {
      await again.stop();
    }
  });
});
