import assert from 'node:assert/strict';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { waitFor } from '../../support/wait-for.js';

const SUBACK = 9;

/**
 * A TCP relay in front of the broker that, when armed, cuts the connection instead of passing on
 * the next SUBACK: the broker took the subscription, the client never heard so.
 */
class SubackCutter {
  armed = false;
  cuts = 0;
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server) {}

  static async start(brokerPort: number): Promise<SubackCutter> {
    const server = createServer();
    const relay = new SubackCutter(server);
    server.on('connection', (client) => relay.pipe(client, brokerPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get url(): string {
    const address = this.server.address();
    assert.ok(address && typeof address === 'object');
    return `mqtt://127.0.0.1:${address.port}`;
  }

  private pipe(client: Socket, brokerPort: number): void {
    const upstream = createConnection(brokerPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    const cut = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', cut);
    upstream.on('close', cut);
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const size = packetSize(pending);
        if (size === undefined || pending.length < size) return;
        const packet = pending.subarray(0, size);
        pending = pending.subarray(size);
        if (this.armed && packet[0] >> 4 === SUBACK) {
          this.armed = false;
          this.cuts++;
          cut();
          return;
        }
        client.write(packet);
      }
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Length of the MQTT packet at the start of `buf` (fixed header included), when known yet. */
function packetSize(buf: Buffer): number | undefined {
  let remaining = 0;
  let multiplier = 1;
  for (let i = 1; i <= 4; i++) {
    if (buf.length <= i) return undefined;
    const byte = buf[i];
    remaining += (byte & 0x7f) * multiplier;
    if ((byte & 0x80) === 0) return 1 + i + remaining;
    multiplier *= 128;
  }
  throw new Error('malformed MQTT remaining length');
}

describe('MqttBus subscription interrupted before its SUBACK', () => {
  it('a second handler on a filter the resumed session holds is still acknowledged, and served', async () => {
    const broker = await EmbeddedBroker.start({ port: 0 });
    const relay = await SubackCutter.start(broker.port);
    const buses: MqttBus[] = [];
    try {
      const bus = await MqttBus.connect({
        url: relay.url,
        clientId: 'resub-dev',
        reconnect: { initialMs: 20, maxMs: 100 },
        connectTimeoutMs: 3_000,
        closeTimeoutMs: 300,
      });
      const pub = await MqttBus.connect({ url: broker.url, clientId: 'resub-pub', connectTimeoutMs: 3_000 });
      buses.push(bus, pub);
      const first: string[] = [];
      const second: string[] = [];
      await bus.subscribe('resub/#', (_t, p) => first.push(p.toString()));

      relay.armed = true;
      const subscribed = bus.subscribe('resub/#', (_t, p) => second.push(p.toString()));
      const outcome = await Promise.race([subscribed.then(() => 'acknowledged'), new Promise((r) => setTimeout(() => r('still waiting'), 3_000))]);
      assert.equal(relay.cuts, 1, 'the relay cut the connection at the SUBACK');
      assert.equal(outcome, 'acknowledged', 'subscribe must settle once the bus is back');
      assert.equal(bus.stats().sessionPresent, true, 'the broker resumed the session');

      await pub.publish('resub/x', 'after');
      await waitFor(() => first.includes('after') && second.includes('after'), 'the message on both handlers');
    } finally {
      await Promise.all(buses.map((b) => b.close()));
      await relay.close();
      await broker.close();
    }
  });
});
