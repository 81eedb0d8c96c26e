/**
 * A PINGRESP late behind PUBLISH packets does not end a connection: while packets keep arriving the
 * broker is alive (a hub working through a backlog after a fleet's hellos dropped its connection at
 * the keepalive, and fell further behind as the broker sent everything again). A broker that goes
 * silent is still given up after the keepalive. The broker is a test peer (mosquitto always answers
 * pings at once): it answers CONNECT and SUBSCRIBE, streams PUBLISH packets every 100 ms while told
 * to, and never answers a PINGREQ.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generate, type Packet } from 'mqtt-packet';
import { createLogger } from '../../../core/src/log/logger.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { SharedSubscriber } from '../../../lib/mqtt/shared-subscriber.js';
import { misbehavingBroker } from '../../support/misbehaving-broker.js';
import { waitFor } from '../../support/wait-for.js';

const v5 = { protocolVersion: 5 } as const;
const KEEPALIVE_SEC = 1;

/** A broker whose connections hear a PUBLISH every 100 ms while `flowing`, and no PINGRESP ever. */
async function pinglessBroker() {
  const state = { flowing: true, pings: 0 };
  const broker = await misbehavingBroker((socket, _n, _packets, parser) => {
    let id = 0;
    parser.on('packet', (p: Packet) => {
      if (p.cmd === 'connect') socket.write(generate({ cmd: 'connack', sessionPresent: false, reasonCode: 0 }, v5));
      else if (p.cmd === 'subscribe') socket.write(generate({ cmd: 'suback', messageId: p.messageId, granted: p.subscriptions.map(() => 1) }, v5));
      else if (p.cmd === 'pingreq') state.pings++;
    });
    const timer = setInterval(() => {
      if (!state.flowing || socket.destroyed) return;
      id = (id % 0xffff) + 1;
      socket.write(
        generate({ cmd: 'publish', topic: 'devices/x/telemetry', payload: Buffer.from('{}'), qos: 1, messageId: id, retain: false, dup: false }, v5),
      );
    }, 100);
    socket.on('close', () => clearInterval(timer));
  });
  return { ...broker, state };
}

describe('keepalive while PUBLISH packets keep arriving', () => {
  const closers: (() => unknown)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('the bus (MQTT.js) keeps its connection while its pings go unanswered behind the packets, and gives a silent broker up', async () => {
    const broker = await pinglessBroker();
    closers.push(() => broker.server.close());
    const bus = MqttBus.create({
      url: broker.url,
      clientId: 'keepalive-bus',
      keepaliveSec: KEEPALIVE_SEC,
      reconnect: { initialMs: 50, maxMs: 100 },
      connectTimeoutMs: 5_000,
      logger: createLogger({ level: 'silent' }),
    });
    closers.push(() => bus.close());
    await bus.start();
    let messages = 0;
    await bus.subscribe('devices/+/telemetry', () => void messages++);
    // Three keepalives: MQTT.js alone ended the connection after 1.5.
    await sleep(3 * KEEPALIVE_SEC * 1000);
    assert.ok(broker.state.pings >= 2, `${broker.state.pings} pings sent`);
    assert.equal(broker.connections(), 1, 'one connection all along');
    assert.equal(bus.stats().connects, 1);
    assert.ok(messages >= 20, `${messages} messages`);
    broker.state.flowing = false;
    await waitFor(() => broker.connections() >= 2, 'a new connection once the broker fell silent', 10_000);
  });

  it('the shared subscriber keeps its connection likewise, and gives a silent broker up', async () => {
    const broker = await pinglessBroker();
    closers.push(() => broker.server.close());
    let messages = 0;
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'keepalive-shared',
      sessionExpirySec: 60,
      receiveMaximum: 10,
      keepaliveSec: KEEPALIVE_SEC,
      reconnectMs: 50,
      logger: createLogger({ level: 'silent' }),
      onMessage: () => {
        messages++;
        return Promise.resolve();
      },
    });
    closers.push(() => sub.close());
    await sub.start();
    await sub.subscribe({ filter: '$share/hubs/devices/+/telemetry', id: 1 });
    await sleep(3 * KEEPALIVE_SEC * 1000);
    assert.ok(broker.state.pings >= 2, `${broker.state.pings} pings sent`);
    assert.equal(broker.connections(), 1, 'one connection all along');
    assert.ok(messages >= 20, `${messages} messages`);
    broker.state.flowing = false;
    await waitFor(() => broker.connections() >= 2, 'a new connection once the broker fell silent', 10_000);
  });
});
