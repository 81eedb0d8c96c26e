/**
 * The thermal governor tells the fleet what it did: a layer 4 device whose die crosses
 * THERMAL_CRITICAL and cools again publishes events/automation_log twice (detection suspended, then
 * resumed), each valid against its contract, and the hub's bus cache takes them as valid events.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { MqttClient } from 'mqtt';
import { AutomationLogEventSchema } from '../../../core/src/contracts/index.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { importPlugin } from '../../../core/src/images/load-image.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startDevice, type DeviceHandle } from '../../../edge/src/device-runtime.js';
import { api, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const ID = 'cam-thermal-log';
let hub: RunningHub;
let device: DeviceHandle | undefined;
let client: MqttClient;
let dir: string;
const logs: unknown[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lookout-thermal-log-'));
  const script = join(dir, 'temp.json');
  // Cool, past THERMAL_CRITICAL_C (85), then well below it again for good.
  await writeFile(
    script,
    JSON.stringify([
      { atS: 0, celsius: 60 },
      { atS: 0.5, celsius: 92 },
      { atS: 1.5, celsius: 92 },
      { atS: 1.6, celsius: 50 },
    ]),
  );
  hub = await testHub();
  client = await mqttClient(hub.brokerUrl, { clientId: 'thermal-log-watch' });
  // The device's hello, as lookout-edge would send it: the hub keeps entries of devices it knows only.
  await publish(client, `devices/${ID}/hello`, msg.hello(ID, ['127.0.0.1'], 8765));
  client.on('message', (_topic, payload) => logs.push(JSON.parse(payload.toString())));
  await new Promise<void>((resolve, reject) => client.subscribe(`devices/${ID}/events/automation_log`, { qos: 1 }, (err) => (err ? reject(err) : resolve())));
  // The edge runtime itself: it is what hands the plugins' automation entries to the status plugin.
  const plugins = await Promise.all(['die-temp', 'camera', 'detector', 'thermal', 'status'].map((n) => importPlugin(n, packageRoot())));
  device = await startDevice({
    deviceId: ID,
    image: { name: 'thermal-log-camera', role: 'camera', plugins },
    layer: 'layer4',
    source: 'sim',
    dataDir: dir,
    mqttUrl: hub.brokerUrl,
    toolPort: 0,
    env: { SIM_TEMP_SCRIPT: script, DIE_TEMP_INTERVAL_MS: '50' },
    logger: createLogger({ level: process.env.LOOKOUT_LOG_LEVEL ?? 'silent' }),
  });
});

after(async () => {
  await device?.stop();
  await endClient(client);
  await hub?.close();
  await rm(dir, { recursive: true, force: true });
});

test('a thermal suspension and the resume each publish events/automation_log', async () => {
  await waitFor('the suspension and the resume on events/automation_log', () => (logs.length >= 2 ? true : undefined), 30_000);
  const [suspend, resume] = logs.map((l) => AutomationLogEventSchema.parse(l));
  assert.deepEqual([suspend.action, suspend.plugin, suspend.trigger, suspend.outcome], ['thermal_suspend', 'thermal', 'THERMAL_CRITICAL', 'ok']);
  assert.match(suspend.message, /^detection suspended: THERMAL_CRITICAL at \d+/);
  assert.deepEqual([resume.action, resume.plugin], ['thermal_resume', 'thermal']);
  // Sampled every 50 ms on the way down, the state it resumed in may be THERMAL_WARN before NORMAL.
  assert.ok(['THERMAL_WARN', 'NORMAL'].includes(resume.trigger), resume.trigger);
  assert.equal(logs.length, 2, 'a stride change is no automation_log: only the suspension and the resume');
  // The hub took them as valid events (an invalid one would be counted under `invalid`).
  const entry = await waitFor('events/automation_log in /fleet/mqtt/latest', async () => {
    const e = (await api(hub.url, `/fleet/mqtt/latest?device=${ID}`)).body.devices?.[ID];
    return e?.topics?.['events/automation_log'] ? e : undefined;
  });
  assert.equal(entry.topics['events/automation_log'].count, 2);
  assert.equal(entry.invalid['events/automation_log'], undefined);
});
