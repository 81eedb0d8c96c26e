import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { connect, type MqttClient } from 'mqtt';
import { generate, type IPublishPacket, type Packet } from 'mqtt-packet';
import { isLookoutError } from '../../../core/src/errors/lookout-error.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { SharedSubscriber } from '../../../lib/mqtt/shared-subscriber.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { misbehavingBroker } from '../../support/misbehaving-broker.js';
import { waitFor } from '../../support/wait-for.js';

const logger = createLogger({ level: 'silent' });

/**
 * A SharedSubscriber with a will in a process of its own (killed with SIGKILL as a crashed replica
 * is); with CLOSE set it closes first. Prints `ready` once connected (and closed).
 */
const WILL_CHILD = `
const { SharedSubscriber } = await import(process.env.SUBSCRIBER_MODULE);
const { createLogger } = await import(process.env.LOGGER_MODULE);
const id = process.env.CLIENT_ID;
const s = new SharedSubscriber({ url: process.env.BROKER_URL, clientId: id, sessionExpirySec: 60, receiveMaximum: 10,
  logger: createLogger({ level: 'silent' }), will: () => ({ topic: 'wills/' + id, payload: 'gone' }), onMessage: async () => {} });
await s.start();
if (process.env.CLOSE) await s.close();
console.log('ready');
setInterval(() => {}, 1000);
`;

function publisher(url: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = connect(url, { clientId: `pub-${Math.random().toString(16).slice(2)}`, protocolVersion: 5, reconnectPeriod: 0 });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}

const text = (p: IPublishPacket): string => p.payload.toString();

async function publishAll(c: MqttClient, topic: string, bodies: string[]): Promise<void> {
  await Promise.all(bodies.map((b) => c.publishAsync(topic, b, { qos: 1 })));
}

describe('SharedSubscriber (the replicas’ ingest connection) against mosquitto', () => {
  it('leaves its will when its process dies without a DISCONNECT, and none when it closes', async () => {
    const broker = await startMosquitto();
    const watcher = await publisher(broker.url);
    const wills: string[] = [];
    watcher.on('message', (topic, payload) => wills.push(`${topic} ${payload.toString()}`));
    await watcher.subscribeAsync('wills/#', { qos: 1 });
    const runThenKill = async (clientId: string, closeFirst: boolean) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', WILL_CHILD], {
        env: {
          ...process.env,
          SUBSCRIBER_MODULE: new URL('../../../lib/mqtt/shared-subscriber.js', import.meta.url).href,
          LOGGER_MODULE: new URL('../../../core/src/log/logger.js', import.meta.url).href,
          BROKER_URL: broker.url,
          CLIENT_ID: clientId,
          ...(closeFirst ? { CLOSE: '1' } : {}),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      // A child that dies before it is ready fails the test now, not at the file's timeout.
      const first = await Promise.race([once(child.stdout, 'data'), once(child, 'exit').then(([code]) => [Buffer.from(`exited ${String(code)}`)])]);
      assert.equal((first[0] as Buffer).toString().trim(), 'ready');
      child.kill('SIGKILL');
      await once(child, 'exit');
    };
    try {
      await runThenKill('will-closed', true);
      await runThenKill('will-killed', false);
      await waitFor(() => wills.length > 0, 'the killed one’s will');
      // The closed one's would have come first: it ended its connection before the other connected.
      assert.deepEqual(wills, ['wills/will-killed gone']);
    } finally {
      watcher.end(true);
      await broker.stop();
    }
  });

  it('works on many messages at once and acknowledges each when its handler is done, in any order', async () => {
    const broker = await startMosquitto();
    const held: { packet: IPublishPacket; done: () => void }[] = [];
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'shared-sub-a',
      sessionExpirySec: 60,
      receiveMaximum: 200,
      logger,
      onMessage: (packet) => new Promise<void>((done) => held.push({ packet, done })),
    });
    const pub = await publisher(broker.url);
    try {
      await sub.start();
      await sub.subscribe({ filter: '$share/g/devices/#', id: 1 });
      await publishAll(
        pub,
        'devices/cam-1/telemetry',
        Array.from({ length: 100 }, (_, i) => String(i)),
      );
      // All hundred are handed over while none is acknowledged (MQTT.js would hand over one).
      await waitFor(() => held.length === 100, 'a hundred messages in hand at once');
      assert.deepEqual(
        held.map((h) => text(h.packet)),
        Array.from({ length: 100 }, (_, i) => String(i)),
      );
      // Acknowledged last to first; then the connection takes more.
      for (const h of [...held].reverse()) h.done();
      await publishAll(pub, 'devices/cam-1/telemetry', ['after']);
      await waitFor(() => held.length === 101, 'a message after the acknowledgements');
      held[100].done();
    } finally {
      pub.end(true);
      await sub.close();
      await broker.stop();
    }
  });

  it('stays connected while mosquitto, acknowledged as they come, sends past the Receive Maximum', async () => {
    const broker = await startMosquitto({ maxInflightMessages: 50 });
    let taken = 0;
    let ends = 0;
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'shared-sub-overrun',
      sessionExpirySec: 60,
      receiveMaximum: 50,
      reconnectMs: null,
      logger,
      onEnd: () => ends++,
      // Each acknowledged after a few milliseconds, in no particular order (as batches written to Redis are).
      onMessage: () => new Promise<void>((done) => setTimeout(() => (taken++, done()), (taken * 7) % 20)),
    });
    const pub = await publisher(broker.url);
    try {
      await sub.start();
      await sub.subscribe({ filter: '$share/g/devices/#', id: 1 });
      await publishAll(
        pub,
        'devices/cam-1/status',
        Array.from({ length: 1000 }, (_, i) => String(i)),
      );
      await waitFor(() => taken >= 1000 || ends > 0, 'every message taken, or the connection ended', 30_000);
      assert.equal(ends, 0, 'the connection was given up');
      assert.equal(sub.connected, true);
    } finally {
      pub.end(true);
      await sub.close();
      await broker.stop();
    }
  });

  it('what was not acknowledged is handed over again to the next connection of the session, what was is not', async () => {
    const broker = await startMosquitto();
    const pub = await publisher(broker.url);
    const make = (onMessage: (p: IPublishPacket) => Promise<void>) =>
      new SharedSubscriber({ url: broker.url, clientId: 'shared-sub-b', sessionExpirySec: 60, receiveMaximum: 50, logger, onMessage });
    try {
      const first: IPublishPacket[] = [];
      const a = make((p) => {
        first.push(p);
        // Even numbers are finished (acknowledged); odd ones never are.
        return Number(text(p)) % 2 === 0 ? Promise.resolve() : new Promise<void>(() => undefined);
      });
      await a.start();
      await a.subscribe({ filter: '$share/g/devices/#', id: 1 });
      await publishAll(
        pub,
        'devices/cam-2/telemetry',
        Array.from({ length: 10 }, (_, i) => String(i)),
      );
      await waitFor(() => first.length === 10, 'ten messages on the first connection');
      // The acknowledgements of the even ones leave at the next turn.
      await new Promise((r) => setTimeout(r, 100));
      await a.close();

      const again: string[] = [];
      const b = make((p) => {
        again.push(text(p));
        return Promise.resolve();
      });
      await b.start();
      await waitFor(() => again.length === 5, 'the five unacknowledged messages again');
      assert.deepEqual(again.sort(), ['1', '3', '5', '7', '9']);
      // The session kept the subscription: new messages come without subscribing again.
      await publishAll(pub, 'devices/cam-2/telemetry', ['10']);
      await waitFor(() => again.includes('10'), 'a new message on the resumed session');
      await b.close();
    } finally {
      pub.end(true);
      await broker.stop();
    }
  });

  it('a session whose subscription ends before its close keeps what it was handed and what was queued for it, and gets nothing more (a replica stopping)', async () => {
    const broker = await startMosquitto();
    const pub = await publisher(broker.url);
    const make = (receiveMaximum: number, onMessage: (p: IPublishPacket) => Promise<void>) =>
      new SharedSubscriber({ url: broker.url, clientId: 'shared-sub-stop', sessionExpirySec: 60, receiveMaximum, logger, onMessage });
    try {
      let handed = 0;
      // Never acknowledged: 50 in hand, the other 250 queued in the session.
      const a = make(50, () => {
        handed++;
        return new Promise<void>(() => undefined);
      });
      await a.start();
      await a.subscribe({ filter: '$share/g/devices/#', id: 1 });
      await publishAll(
        pub,
        'devices/cam-3/telemetry',
        Array.from({ length: 300 }, (_, i) => String(i)),
      );
      await waitFor(() => handed >= 50, 'the first fifty in hand');
      a.unsubscribe('$share/g/devices/#');
      await a.close();
      await publishAll(pub, 'devices/cam-3/telemetry', ['after']);

      const again = new Set<string>();
      const b = make(1000, (p) => {
        again.add(text(p));
        return Promise.resolve();
      });
      await b.start();
      await waitFor(() => again.size === 300, 'the three hundred again');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(again.has('after'), false, 'published after the subscription ended: not routed to the session');
      assert.equal(again.size, 300);
      await b.close({ endSession: true });
    } finally {
      pub.end(true);
      await broker.stop();
    }
  });

  it('a close sends the acknowledgements gathered in its turn before its DISCONNECT: those messages are not handed over again', async () => {
    const broker = await startMosquitto();
    const pub = await publisher(broker.url);
    const make = (onMessage: (p: IPublishPacket) => Promise<void>) =>
      new SharedSubscriber({ url: broker.url, clientId: 'shared-sub-close', sessionExpirySec: 60, receiveMaximum: 50, logger, onMessage });
    let b: SharedSubscriber | undefined;
    try {
      const held: { packet: IPublishPacket; done: () => void }[] = [];
      const a = make((packet) => new Promise<void>((done) => held.push({ packet, done })));
      await a.start();
      await a.subscribe({ filter: '$share/g/devices/#', id: 1 });
      await publishAll(
        pub,
        'devices/cam-4/telemetry',
        Array.from({ length: 6 }, (_, i) => String(i)),
      );
      await waitFor(() => held.length === 6, 'six messages in hand');
      // The first four are finished and their acknowledgements queued; the close comes in the same turn.
      for (const h of held.slice(0, 4)) h.done();
      for (let i = 0; i < 5; i++) await Promise.resolve();
      await a.close();

      const again: string[] = [];
      b = make((p) => {
        again.push(text(p));
        return Promise.resolve();
      });
      await b.start();
      await waitFor(() => again.length >= 2, 'the two unfinished messages again');
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(again.sort(), ['4', '5']);
    } finally {
      await b?.close();
      pub.end(true);
      await broker.stop();
    }
  });

  it('reconnects after the broker restarts and goes on taking messages', async () => {
    const broker: Mosquitto = await startMosquitto({ persistence: true });
    const got: string[] = [];
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'shared-sub-c',
      sessionExpirySec: 60,
      receiveMaximum: 50,
      reconnectMs: 50,
      logger,
      onMessage: (p) => {
        got.push(text(p));
        return Promise.resolve();
      },
    });
    try {
      await sub.start();
      await sub.subscribe({ filter: '$share/g/devices/#', id: 1 });
      await broker.restart();
      await waitFor(() => sub.connected, 'the reconnect', 8_000);
      const pub = await publisher(broker.url);
      await publishAll(pub, 'devices/cam-3/telemetry', ['x']);
      await waitFor(() => got.includes('x'), 'a message after the restart');
      pub.end(true);
    } finally {
      await sub.close();
      await broker.stop();
    }
  });

  it('a broker that refuses the credentials fails the start with the reason', async () => {
    const broker = await startMosquitto({ users: { hub: 'right' } });
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'shared-sub-d',
      username: 'hub',
      password: 'wrong',
      sessionExpirySec: 60,
      receiveMaximum: 10,
      connectTimeoutMs: 3_000,
      logger,
      onMessage: () => Promise.resolve(),
    });
    try {
      await assert.rejects(sub.start(), /refused the connection \(CONNACK reason 1(34|35)\)/);
    } finally {
      await sub.close();
      await broker.stop();
    }
  });
});

const v5 = { protocolVersion: 5 } as const;

describe('SharedSubscriber against a broker that misbehaves', () => {
  it('refuses a WebSocket URL rather than speak MQTT to it in clear over TCP', () => {
    for (const url of ['ws://u:p@127.0.0.1:9001/mqtt', 'wss://u:p@127.0.0.1/mqtt']) {
      assert.throws(
        () => new SharedSubscriber({ url, clientId: 'x', sessionExpirySec: 60, receiveMaximum: 10, logger, onMessage: () => Promise.resolve() }),
        (e) => isLookoutError(e, 'config_invalid'),
      );
    }
  });

  it('gives up on a reconnect the broker takes and never answers, and tries again', async () => {
    const broker = await misbehavingBroker((socket, n) => {
      // The first connection is accepted, then dropped; every later one hears nothing.
      if (n === 1) setTimeout(() => socket.end(generate({ cmd: 'connack', sessionPresent: false, reasonCode: 0 }, v5)), 20);
    });
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'misbehaved-a',
      sessionExpirySec: 60,
      receiveMaximum: 10,
      connectTimeoutMs: 200,
      reconnectMs: 20,
      logger,
      onMessage: () => Promise.resolve(),
    });
    try {
      await sub.start();
      await waitFor(() => broker.connections() >= 4, 'new attempts after silent ones', 5_000);
    } finally {
      await sub.close();
      broker.server.close();
    }
  });

  it('a start that fails leaves no client trying again', async () => {
    // Every connection refused (135: not authorised), as a broker does with a wrong password.
    const broker = await misbehavingBroker((socket) => socket.write(generate({ cmd: 'connack', sessionPresent: false, reasonCode: 135 }, v5)));
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'misbehaved-b',
      sessionExpirySec: 60,
      receiveMaximum: 10,
      connectTimeoutMs: 150,
      reconnectMs: 20,
      logger,
      onMessage: () => Promise.resolve(),
    });
    try {
      await assert.rejects(sub.start(), /CONNACK reason 135/);
      const after = broker.connections();
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(broker.connections(), after);
    } finally {
      broker.server.close();
    }
  });

  it('disconnects (0x93) a broker that sends more than it may have in hand', async () => {
    let disconnect: Packet | undefined;
    const broker = await misbehavingBroker((socket, n, packets) => {
      if (n > 1) return;
      socket.write(generate({ cmd: 'connack', sessionPresent: false, reasonCode: 0 }, v5));
      for (let i = 1; i <= 8; i++)
        socket.write(
          generate({ cmd: 'publish', topic: 'devices/x/telemetry', payload: Buffer.from('{}'), qos: 1, messageId: i, retain: false, dup: false }, v5),
        );
      socket.on('close', () => (disconnect = packets.find((p) => p.cmd === 'disconnect')));
    });
    const handed: IPublishPacket[] = [];
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'misbehaved-c',
      sessionExpirySec: 60,
      receiveMaximum: 2,
      maxInHand: 4,
      reconnectMs: 5_000,
      logger,
      onMessage: (p) => {
        handed.push(p);
        return new Promise<void>(() => undefined);
      },
    });
    try {
      await sub.start();
      await waitFor(() => disconnect !== undefined, 'the DISCONNECT');
      assert.equal((disconnect as { reasonCode?: number }).reasonCode, 0x93);
      assert.equal(handed.length, 4, 'no more than maxInHand handed to the handler');
    } finally {
      await sub.close();
      broker.server.close();
    }
  });

  it('a SUBSCRIBE whose SUBACK a lost connection took is sent again on the next one, and resolves there; a session kept is not subscribed again', async () => {
    // What each connection was sent, and the session the broker says it kept.
    const heard: string[][] = [];
    let current: Socket | undefined;
    const broker = await misbehavingBroker((socket, n, _packets, parser) => {
      current = socket;
      heard[n] = [];
      socket.write(generate({ cmd: 'connack', sessionPresent: n > 1, reasonCode: 0 }, v5));
      parser.on('packet', (p: Packet) => {
        if (p.cmd === 'pingreq') return;
        heard[n].push(
          p.cmd === 'subscribe' ? `subscribe ${p.subscriptions[0].topic}` : p.cmd === 'unsubscribe' ? `unsubscribe ${p.unsubscriptions[0]}` : p.cmd,
        );
        // The first SUBSCRIBE of the first connection: the connection drops before its SUBACK.
        if (n === 1 && p.cmd === 'subscribe') socket.destroy();
        else if (p.cmd === 'subscribe') socket.write(generate({ cmd: 'suback', messageId: p.messageId, granted: [1] }, v5));
      });
    });
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'misbehaved-d',
      sessionExpirySec: 60,
      receiveMaximum: 10,
      reconnectMs: 20,
      resubscribeWithSession: false,
      logger,
      onMessage: () => Promise.resolve(),
    });
    try {
      await sub.start();
      await sub.subscribe({ filter: 'devices/+/dets', id: 7 });
      assert.deepEqual(heard[2], ['connect', 'subscribe devices/+/dets'], 'sent again on the next connection, where its SUBACK came');
      await sub.subscribe({ filter: 'devices/+/status', id: 8 });
      sub.unsubscribe('devices/+/status');
      await waitFor(() => heard[2].includes('unsubscribe devices/+/status'), 'the UNSUBSCRIBE');
      // Dropped again: the broker says it kept the session, so nothing is subscribed again.
      current?.destroy();
      await waitFor(() => heard[3] !== undefined && sub.connected, 'the third connection');
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(heard[3], ['connect']);
    } finally {
      await sub.close();
      broker.server.close();
    }
  });

  it('says when a broker has no subscription identifiers', async () => {
    const broker = await misbehavingBroker((socket) =>
      socket.write(generate({ cmd: 'connack', sessionPresent: false, reasonCode: 0, properties: { subscriptionIdentifiersAvailable: false } }, v5)),
    );
    const sub = new SharedSubscriber({
      url: broker.url,
      clientId: 'misbehaved-e',
      sessionExpirySec: 60,
      receiveMaximum: 10,
      logger,
      onMessage: () => Promise.resolve(),
    });
    try {
      await sub.start();
      assert.equal(sub.subscriptionIdentifiers, false);
    } finally {
      await sub.close();
      broker.server.close();
    }
  });
});
