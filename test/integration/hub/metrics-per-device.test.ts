/**
 * What an operator scrapes (issue 26, item 7): the hub's /metrics carries per-device gauges for the
 * devices it knows, a device's tool server serves its own /metrics behind the same token rules as
 * its tools, both pass `promtool check metrics`, and every metric the Grafana dashboard in
 * deploy/grafana queries is on one of them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { importPlugin } from '../../../core/src/images/load-image.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startDevice, type DeviceHandle } from '../../../edge/src/device-runtime.js';
import { HubMetrics } from '../../../hub/src/hub-metrics.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { promtoolCheckMetrics } from '../../support/promtool.js';
import { api, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const TOKEN = 'metrics-test-tool-token-0123456789abcdef';
/** Exposition lines of one series: `name{labels} value`. */
const series = (text: string, name: string, deviceId: string): string[] =>
  text.split('\n').filter((l) => l.startsWith(`${name}{`) && l.includes(`device_id="${deviceId}"`));
const value = (text: string, name: string, deviceId: string): number | undefined => {
  const [line] = series(text, name, deviceId);
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};
const typed = (text: string): Set<string> => new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));

/** Polls `check` until it gives a value. */
const until = <T>(check: () => Promise<T | undefined>, what: string): Promise<T> => waitFor(what, check, 20_000);

describe("the hub's /metrics per device", () => {
  let hub: RunningHub;
  let client: MqttClient;
  before(async () => {
    hub = await testHub({ defaultMetrics: true });
    client = await mqttClient(hub.brokerUrl, { clientId: 'metrics-test' });
  });
  after(async () => {
    await endClient(client);
    await hub.close();
  });

  it('writes each known device’s gauges, only its presence once it is offline, and passes promtool', async () => {
    for (const id of ['cam-1', 'cam-2']) {
      await publish(client, `devices/${id}/hello`, msg.hello(id, ['127.0.0.1'], 9));
      await publish(
        client,
        `devices/${id}/status`,
        { ...msg.status(id, 'online', 51.5), plugins: [{ name: 'detector', version: '1', state: 'failed', code: 'x' }] },
        { retain: true },
      );
      await publish(client, `devices/${id}/telemetry`, msg.telemetry(51.5, 9));
      await publish(client, `devices/${id}/health`, msg.health(id, id === 'cam-2' ? 'WARNING' : 'OK'));
      await publish(client, `devices/${id}/dets`, msg.dets(2));
      await publish(client, `devices/${id}/data_manifest`, msg.manifest(['a.h265', 'b.h265']));
    }
    const scrape = async () => (await api(hub.url, '/metrics')).text;
    const text = await until(async () => {
      const t = await scrape();
      return value(t, 'lookout_device_persons', 'cam-2') === 2 && value(t, 'lookout_device_recorder_writing', 'cam-2') !== undefined ? t : undefined;
    }, 'both devices on /metrics');
    assert.equal(value(text, 'lookout_device_online', 'cam-1'), 1);
    assert.equal(value(text, 'lookout_device_die_temperature_celsius', 'cam-1'), 51.5);
    assert.equal(value(text, 'lookout_device_detection_fps', 'cam-1'), 9);
    assert.equal(value(text, 'lookout_device_storage_free_bytes', 'cam-1'), 12.5 * 1024 ** 3);
    assert.equal(value(text, 'lookout_device_recorder_writing', 'cam-1'), 1);
    assert.equal(value(text, 'lookout_device_plugins_failed', 'cam-1'), 1);
    assert.match(text, /^lookout_device_storage_health\{device_id="cam-2",health="WARNING"\} 1$/m);
    assert.match(text, /^lookout_device_thermal_state\{device_id="cam-1",state="NORMAL"\} 1$/m);
    const check = await promtoolCheckMetrics(text);
    assert.equal(check.code, 0, check.output);
    assert.equal(check.output.trim(), '', 'promtool has no complaint');

    await publish(client, 'devices/cam-2/status', msg.status('cam-2', 'offline'), { retain: true });
    const after = await until(async () => {
      const t = await scrape();
      return value(t, 'lookout_device_online', 'cam-2') === 0 ? t : undefined;
    }, 'cam-2 offline on /metrics');
    // What an offline device last said is history: no stale temperature or fps is scraped as current.
    assert.deepEqual(
      after.split('\n').filter((l) => l.includes('device_id="cam-2"')),
      ['lookout_device_online{device_id="cam-2"} 0'],
    );
  });
});

describe("a device's tool server /metrics", () => {
  let device: DeviceHandle;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-metrics-'));
    const names = ['die-temp', 'identity', 'system-health', 'status', 'camera', 'detector'];
    const image = { name: 'detecting', role: 'camera', plugins: await Promise.all(names.map((n) => importPlugin(n, packageRoot()))) };
    device = await startDevice({
      deviceId: 'cam-m',
      image,
      layer: 'layer1',
      source: 'sim',
      dataDir: dir,
      bus: new MemoryBus(),
      toolPort: 0,
      toolToken: TOKEN,
      logger: createLogger({ level: 'silent' }),
      env: { SIM_SCENARIO: 'people-crossing', STATUS_INTERVAL_MS: '200', PATH: process.env.PATH },
    });
  });
  after(async () => {
    await device?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers with the bearer token or from loopback, refuses a wrong token, and passes promtool', async () => {
    const url = new URL(device.toolUrl!);
    const metricsUrl = `http://${url.host}/metrics`;
    const wrong = await fetch(metricsUrl, { headers: { authorization: 'Bearer not-the-token-of-this-device-0000000' } });
    assert.equal(wrong.status, 401);
    const text = await until(async () => {
      const res = await fetch(metricsUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      const t = await res.text();
      return value(t, 'lookout_device_detection_fps', 'cam-m') !== undefined && value(t, 'lookout_device_die_temperature_celsius', 'cam-m') !== undefined
        ? t
        : undefined;
    }, 'the device measuring');
    assert.equal(value(text, 'lookout_device_online', 'cam-m'), 1);
    assert.equal(value(text, 'lookout_device_plugins_failed', 'cam-m'), 0);
    assert.ok(value(text, 'lookout_device_persons', 'cam-m') !== undefined, text);
    const check = await promtoolCheckMetrics(text);
    assert.equal(check.code, 0, check.output);
    assert.equal(check.output.trim(), '', 'promtool has no complaint');
    assert.equal((await fetch(metricsUrl, { method: 'POST' })).status, 405);
  });
});

describe('the Grafana dashboard in deploy/grafana', () => {
  it('is JSON whose every queried metric is on the hub’s /metrics (the device’s are the same gauges; a replica’s own too)', async () => {
    const replica = new HubMetrics();
    replica.setReplicaSource('lookout-hub', () => ({ stale: false, readLagMs: 0 }));
    const hubText = (await replica.text()).body;
    const dashboard = JSON.parse(readFileSync(join(packageRoot(), 'deploy', 'grafana', 'lookout-fleet.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const known = typed(hubText);
    const queried = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => [...t.expr.matchAll(/\b(lookout_[a-z_]+)\b/g)].map((m) => m[1])));
    assert.ok(queried.length >= 10, 'the dashboard queries the device gauges');
    // A counter's exposition names it without _total in its TYPE line.
    assert.deepEqual(
      queried.filter((name) => !known.has(name) && !known.has(name.replace(/_total$/, ''))),
      [],
    );
  });
});
