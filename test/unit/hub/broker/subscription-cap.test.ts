/**
 * The embedded broker bounds the topic filters one client may hold: past the cap a filter is refused
 * in the SUBACK (0x80), within one SUBSCRIBE packet too; an unsubscribe frees room; a filter already
 * held is granted again; other clients are not affected.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { EmbeddedBroker } from '../../../../hub/src/broker/embedded-broker.js';

const CAP = 8;

function connect(url: string, clientId: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(url, { clientId, reconnectPeriod: 0, clean: false });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}

/** The SUBACK's return codes (MQTT.js rejects a SUBACK holding a refusal; its packet still says which). */
async function suback(c: MqttClient, filters: string | string[], qos: 0 | 1): Promise<number[]> {
  try {
    return (await c.subscribeAsync(filters, { qos })).map((g) => g.qos);
  } catch (err) {
    const granted = (err as { packet?: { granted?: number[] } }).packet?.granted;
    if (!granted) throw err;
    return granted;
  }
}

describe('embedded broker: topic filters per client are bounded', () => {
  let broker: EmbeddedBroker;
  const clients: MqttClient[] = [];
  before(async () => {
    broker = await EmbeddedBroker.start({ port: 0, maxSubscriptionsPerClient: CAP });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.endAsync()));
    await broker.close();
  });

  it('refuses filters past the cap, within one SUBSCRIBE packet too, and an unsubscribe frees room', async () => {
    const c = await connect(broker.url, 'sub-cap-a');
    clients.push(c);
    const filters = Array.from({ length: CAP + 3 }, (_, i) => `devices/cam-${i}/status`);
    assert.deepEqual(await suback(c, filters, 1), [...Array(CAP).fill(1), 128, 128, 128]);

    // A filter it already holds is granted again; a new one still is not.
    assert.deepEqual(await suback(c, [filters[0], 'devices/new/status'], 1), [1, 128]);

    await c.unsubscribeAsync(filters[1]);
    assert.deepEqual(await suback(c, 'devices/new/status', 1), [1]);
  });

  it('counts each client on its own', async () => {
    const b = await connect(broker.url, 'sub-cap-b');
    clients.push(b);
    assert.deepEqual(await suback(b, 'devices/+/status', 0), [0]);
  });
});
