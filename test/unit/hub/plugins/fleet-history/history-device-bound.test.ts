/**
 * The in-memory hour of telemetry is held for at most LOOKOUT_HISTORY_MAX_DEVICES devices (here 2),
 * in a real hub with its embedded broker and devices publishing through a real MQTT client. A device
 * still talking is never forgotten for a newcomer (the newcomer has no samples meanwhile); one silent
 * for LOOKOUT_HISTORY_FORGET_AFTER_MS makes room. Before, every newcomer pushed out the device
 * silent longest at once: with more devices talking than held, none kept a history.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { api, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../../../support/hub-helpers.js';
import { freePort } from '../../../../support/free-port.js';

const FORGET_AFTER_MS = 1500;

describe('fleet history: the devices held in memory', () => {
  let hub: RunningHub;
  let client: MqttClient;
  const samples = async (device: string): Promise<{ t: number; die_temp_c: number | null }[]> => {
    const r = await api(hub.url, `/fleet/history?device=${device}`);
    assert.equal(r.status, 200, r.text);
    return r.body.samples as { t: number; die_temp_c: number | null }[];
  };
  const telemetry = (device: string, dieTemp: number) => publish(client, `devices/${device}/telemetry`, msg.telemetry(dieTemp, 10));

  before(async () => {
    hub = await testHub({
      env: {
        LOOKOUT_HISTORY_MAX_DEVICES: '2',
        LOOKOUT_HISTORY_FORGET_AFTER_MS: String(FORGET_AFTER_MS),
        LOOKOUT_HISTORY_STEP_MS: '100',
        READINESS_START_DELAY_MS: '600000',
      },
    });
    client = await mqttClient(hub.brokerUrl);
    for (const id of ['cam-1', 'cam-2', 'cam-3']) await publish(client, `devices/${id}/hello`, msg.hello(id, ['127.0.0.1'], await freePort()));
  });

  after(async () => {
    if (client) await endClient(client);
    await hub?.close();
  });

  it('keeps the devices that talk, gives a newcomer none until one is silent long enough, then forgets that one', async () => {
    await telemetry('cam-1', 41);
    await telemetry('cam-2', 42);
    await waitFor('cam-1 and cam-2 in the history', async () => (await samples('cam-1')).length > 0 && (await samples('cam-2')).length > 0);
    // A third device while both held ones talk: it is not held, and neither of them is forgotten.
    await telemetry('cam-3', 43);
    await waitFor('cam-3 in the cache', async () => (await api(hub.url, '/fleet/mqtt/latest?device=cam-3')).body.devices?.['cam-3'] !== undefined);
    assert.deepEqual(await samples('cam-3'), []);
    assert.equal((await samples('cam-1')).at(-1)?.die_temp_c, 41);
    assert.equal((await samples('cam-2')).at(-1)?.die_temp_c, 42);

    // cam-2 falls silent; cam-1 goes on (in later steps: a reading in the step of the last one updates it).
    // Once cam-2 was silent long enough, cam-3 takes its place.
    await new Promise((r) => setTimeout(r, 250));
    const until = Date.now() + FORGET_AFTER_MS + 300;
    while (Date.now() < until) {
      await telemetry('cam-1', 51);
      await new Promise((r) => setTimeout(r, 150));
    }
    await telemetry('cam-3', 53);
    await waitFor('cam-3 held', async () => (await samples('cam-3')).at(-1)?.die_temp_c === 53);
    assert.deepEqual(await samples('cam-2'), [], 'cam-2, silent longest, was forgotten');
    const kept = await samples('cam-1');
    assert.equal(kept[0].die_temp_c, 41, 'cam-1 kept its history from the start');
    assert.equal(kept.at(-1)?.die_temp_c, 51);
  });
});
