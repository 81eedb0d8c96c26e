/**
 * A device killed without a goodbye, seen from the hub: the broker sends its last-will, which says
 * only what it knows (when it was set, no timestamp of a moment it never knew, no temperature), and
 * the hub stamps `offline_since` on its arrival and keeps when the device itself was last heard.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, testHub, waitFor } from '../../support/hub-helpers.js';

let hub: RunningHub;
let device: DeviceProcess | undefined;

before(async () => {
  hub = await testHub();
});
after(async () => {
  await device?.kill();
  await hub?.close();
});

type Entry = {
  online: boolean;
  status: Record<string, unknown> | null;
  offline_since?: string | null;
  last_seen_at?: string | null;
  last_message_at: string | null;
};
const entry = async (id: string): Promise<Entry | undefined> => (await api(hub.url, `/fleet/mqtt/latest?device=${id}`)).body.devices?.[id] as Entry | undefined;

test('a killed device: the will names its fields for what they are, the hub stamps offline_since and keeps last_seen_at', async () => {
  const image = join(packageRoot(), 'test', 'fixtures', 'images', 'base-camera.json');
  device = await startDeviceProcess({ deviceId: 'cam-will', mqtt: hub.brokerUrl, image, layer: 'layer0', env: { DIE_TEMP_INTERVAL_MS: '100' } });
  const online = await waitFor('the device online with its telemetry', async () => {
    const e = await entry('cam-will');
    return e?.online && e.last_seen_at ? e : undefined;
  });
  assert.equal(online.offline_since, null);

  const killing = Date.now();
  await device.kill();
  const killedAt = Date.now();
  const offline = await waitFor('the last-will in the cache', async () => {
    const e = await entry('cam-will');
    return e?.status?.state === 'offline' ? e : undefined;
  });
  const will = offline.status!;
  assert.equal(will.reason, 'connection_lost');
  assert.equal(will.timestamp, undefined, 'the will has no timestamp of a moment it cannot know');
  assert.ok(Date.parse(will.will_set_at as string) < killedAt, `will_set_at ${String(will.will_set_at)}`);
  assert.deepEqual([will.die_temp_c, will.thermal_state], [null, null], 'no connect-time temperature as if current');

  assert.equal(offline.online, false);
  assert.ok(
    offline.offline_since && Date.parse(offline.offline_since) >= killing,
    `offline_since ${offline.offline_since}, killed at ${new Date(killing).toISOString()}`,
  );
  // Received-time: a message the device sent just before it died may reach the hub after the kill
  // returned, so last_seen_at is bounded by the will's arrival, not by the moment of the kill.
  assert.ok(offline.last_seen_at, `last_seen_at ${offline.last_seen_at}`);
  assert.ok(Date.parse(offline.last_seen_at) <= Date.parse(offline.offline_since), 'last heard before the will arrived');
  assert.ok(Date.parse(offline.last_seen_at) >= Date.parse(online.last_seen_at!), 'the device’s own last message, kept');
});
