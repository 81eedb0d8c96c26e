/**
 * What a stranger can make the embedded broker hold before it authenticates anyone, over real
 * sockets: connections per remote address and in all, the time to a complete CONNECT, and the size of
 * that CONNECT. Other loopback addresses (127.0.0.2…) stand for other hosts.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { EmbeddedBroker } from '../../../../hub/src/broker/embedded-broker.js';
import { brokerConnectionBudget, descriptorLimit } from '../../../../hub/src/broker/descriptor-budget.js';
import { endClient, mqttClient, TEST_FLEET_SECRET, waitFor } from '../../../support/hub-helpers.js';
import { busPassword } from '../../../../lib/auth/bus-acl.js';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** MQTT's variable-length encoding of a remaining length. */
function remainingLength(n: number): Buffer {
  const bytes: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    bytes.push(byte);
  } while (n > 0);
  return Buffer.from(bytes);
}

const opened: Socket[] = [];
after(() => {
  for (const s of opened) s.destroy();
});

/** A TCP connection from `localAddress`, resolved once connected (`closed` says whether it has closed since). */
async function socketFrom(port: number, localAddress: string): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  opened.push(socket);
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  return socket;
}

/** Resolves 'closed' when the socket closes, 'open' if it is still open after `ms`. */
function closedWithin(socket: Socket, ms: number): Promise<'closed' | 'open'> {
  if (socket.closed) return Promise.resolve('closed');
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('open'), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
  });
}

const cam = (id: string) => ({ username: id, password: busPassword(TEST_FLEET_SECRET, id), clientId: id });

describe('embedded broker connection limits', () => {
  it('closes at once the sockets one address opens beyond its cap, while another address still connects', async () => {
    const broker = await EmbeddedBroker.start({ port: 0, auth: { fleetSecret: TEST_FLEET_SECRET }, maxConnectionsPerAddress: 4, connectTimeoutMs: 60_000 });
    try {
      const held = await Promise.all(Array.from({ length: 4 }, () => socketFrom(broker.port, '127.0.0.2')));
      const extra = await Promise.all(Array.from({ length: 6 }, () => socketFrom(broker.port, '127.0.0.2')));
      // Closed by the broker, not after any deadline (the CONNECT deadline here is a minute).
      for (const s of extra) assert.equal(await closedWithin(s, 5000), 'closed');
      for (const s of held) assert.equal(s.closed, false, 'the first four stay open');
      const device = await mqttClient(broker.url, cam('cam-1'));
      assert.equal(device.connected, true);
      await endClient(device);
      // A slot freed by a close is free again.
      held[0].destroy();
      await waitFor('the freed slot', async () => {
        const again = await socketFrom(broker.port, '127.0.0.2');
        const state = await closedWithin(again, 300);
        return state === 'open' ? true : undefined;
      });
    } finally {
      await broker.close();
    }
  });

  it('closes sockets beyond the total cap, whatever address they come from', async () => {
    const broker = await EmbeddedBroker.start({ port: 0, maxConnections: 6, maxConnectionsPerAddress: 6, connectTimeoutMs: 60_000 });
    try {
      const held = await Promise.all(['127.0.0.2', '127.0.0.3', '127.0.0.4'].flatMap((a) => [socketFrom(broker.port, a), socketFrom(broker.port, a)]));
      const extra = await Promise.all(['127.0.0.5', '127.0.0.6'].map((a) => socketFrom(broker.port, a)));
      for (const s of extra) assert.equal(await closedWithin(s, 5000), 'closed');
      for (const s of held) assert.equal(s.closed, false);
    } finally {
      await broker.close();
    }
  });

  it('closes a socket whose CONNECT is not complete by the deadline', async () => {
    const broker = await EmbeddedBroker.start({ port: 0, auth: { fleetSecret: TEST_FLEET_SECRET }, connectTimeoutMs: 300 });
    try {
      const socket = await socketFrom(broker.port, '127.0.0.2');
      // A CONNECT announcing 100 bytes, of which 10 are sent.
      socket.write(Buffer.concat([Buffer.from([0x10]), remainingLength(100), Buffer.alloc(10)]));
      // aedes's own default would keep it 30 s.
      assert.equal(await closedWithin(socket, 10_000), 'closed');
      // A device that connects in time is not affected.
      const device = await mqttClient(broker.url, cam('cam-2'));
      assert.equal(device.connected, true);
      await endClient(device);
    } finally {
      await broker.close();
    }
  });

  it('refuses a CONNECT larger than a few KiB before reading it, and takes a device with a status will', async () => {
    const broker = await EmbeddedBroker.start({ port: 0, auth: { fleetSecret: TEST_FLEET_SECRET }, connectTimeoutMs: 60_000 });
    try {
      const socket = await socketFrom(broker.port, '127.0.0.2');
      // 60 KB: under the old 64 KiB bound, far over what a CONNECT carries.
      socket.write(Buffer.concat([Buffer.from([0x10]), remainingLength(60_000), Buffer.alloc(1024)]));
      assert.equal(await closedWithin(socket, 5000), 'closed');
      const will = {
        topic: 'devices/cam-3/status',
        payload: Buffer.from(JSON.stringify({ device_id: 'cam-3', state: 'offline', pad: 'x'.repeat(2000) })),
        qos: 1 as const,
        retain: true,
      };
      const device = await mqttClient(broker.url, { ...cam('cam-3'), will });
      assert.equal(device.connected, true);
      await endClient(device);
    } finally {
      await broker.close();
    }
  });

  it('refuses nonsense limits with config_invalid', async () => {
    await assert.rejects(EmbeddedBroker.start({ port: 0, maxConnections: 0 }), { code: 'config_invalid' });
    await assert.rejects(EmbeddedBroker.start({ port: 0, connectTimeoutMs: -1 }), { code: 'config_invalid' });
  });
});

describe('descriptor budget', () => {
  it('reads the soft open-files limit and keeps a reserve for the rest of the hub', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lookout-limits-'));
    const file = join(dir, 'limits');
    writeFileSync(
      file,
      'Limit                     Soft Limit           Hard Limit           Units\nMax open files            20000                40000                files\n',
    );
    assert.equal(descriptorLimit(file), 20000);
    assert.equal(descriptorLimit(join(dir, 'absent')), undefined);
    assert.equal(typeof descriptorLimit(), 'number');
    assert.equal(brokerConnectionBudget(20000), 15000);
    assert.equal(brokerConnectionBudget(1024), 768);
    assert.equal(brokerConnectionBudget(512), 256);
    assert.equal(brokerConnectionBudget(256), 128);
    assert.equal(brokerConnectionBudget(1_048_576), 1_048_576 - 8192);
  });
});
