import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { EmbeddedBroker } from '../../../../hub/src/broker/embedded-broker.js';
import { mqttClient, TEST_FLEET_SECRET } from '../../../support/hub-helpers.js';
import { busPassword } from '../../../../lib/auth/bus-acl.js';

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

test('a connection announcing an oversized packet is dropped before its body is read, authenticated or not', async () => {
  const broker = await EmbeddedBroker.start({ port: 0, auth: { fleetSecret: TEST_FLEET_SECRET }, maxPayloadBytes: 1024 * 1024 });
  try {
    // Unauthenticated: a CONNECT claiming 200 MiB.
    const raw = connect(broker.port, '127.0.0.1');
    await once(raw, 'connect');
    raw.write(Buffer.concat([Buffer.from([0x10]), remainingLength(200 * 1024 * 1024), Buffer.alloc(4096)]));
    const closed = await Promise.race([once(raw, 'close').then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 2000))]);
    assert.equal(closed, 'closed');

    // An authenticated device still publishes normally, and its own 200 MiB announcement ends it too.
    const device = await mqttClient(broker.url, { username: 'cam-1', password: busPassword(TEST_FLEET_SECRET, 'cam-1'), clientId: 'cam-1' });
    await new Promise<void>((resolve, reject) => device.publish('devices/cam-1/status', '{}', { qos: 1 }, (err) => (err ? reject(err) : resolve())));
    const stream = (device as unknown as { stream: { write(b: Buffer): void } }).stream;
    const ended = new Promise<void>((resolve) => device.once('close', () => resolve()));
    stream.write(Buffer.concat([Buffer.from([0x30]), remainingLength(200 * 1024 * 1024), Buffer.alloc(1024)]));
    await ended;
    device.end(true);
  } finally {
    await broker.close();
  }
});
