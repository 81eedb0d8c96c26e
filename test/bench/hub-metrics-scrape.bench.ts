/**
 * What a Prometheus scrape of the hub's /metrics costs at fleet size. Two parts, side by side:
 *
 *  1. The per-device gauges alone, for LOOKOUT_BENCH_DEVICES (10 000) devices with every gauge
 *     known: `deviceGaugesText` (what the hub writes) against, as the baseline, the same series
 *     through prom-client gauges (set with a label hash each, then formatted by its registry: how the
 *     hub wrote them before), alternating, median of LOOKOUT_BENCH_ROUNDS (7). The two texts are
 *     checked to be the same.
 *  2. A hub (in this process, embedded broker) that has heard hello, status, telemetry and dets
 *     from every device: GET /metrics from a plain fetch, median time, size and series.
 *
 *   node dist/test/bench/hub-metrics-scrape.bench.js         (npm run bench -- hub-metrics-scrape)
 *   LOOKOUT_BENCH_DEVICES=1000 node dist/test/bench/hub-metrics-scrape.bench.js
 */
import { Gauge, Registry } from 'prom-client';
import { createLogger } from '../../core/src/log/logger.js';
import { startHub } from '../../hub/src/start-hub.js';
import { MemoryStateStore } from '../../hub/src/state/memory-state-store.js';
import { DEVICE_STATE_SETS, deviceGaugesText, PLAIN_DEVICE_GAUGES, sampleFromMessages, type DeviceGaugeSample } from '../../lib/metrics/device-gauges.js';
import { endClient, mqttClient, msg, publish } from '../support/hub-helpers.js';
import { deviceId, hello } from './fleet-devices.js';

const DEVICES = Number(process.env.LOOKOUT_BENCH_DEVICES ?? 10_000);
const ROUNDS = Number(process.env.LOOKOUT_BENCH_ROUNDS ?? 7);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (started: number) => performance.now() - started;

function samples(): DeviceGaugeSample[] {
  return Array.from({ length: DEVICES }, (_, i) =>
    sampleFromMessages(
      deviceId(i),
      {
        status: { die_temp_c: 40 + (i % 20), thermal_state: 'NORMAL', plugins: [{ state: 'ok' }] },
        telemetry: { telemetry: { fps: 9.5, camera_fps: 10 } },
        health: { storage_health: 'OK', storage: { free_gb: 12.5 } },
        dets: { person_count: i % 3 },
      },
      { online: true, recorder_writing: true },
    ),
  );
}

/** The baseline: the same families as prom-client gauges, set at every scrape and written by its registry. */
function promClientText(all: DeviceGaugeSample[]): () => Promise<string> {
  const registry = new Registry();
  const setters: (() => void)[] = [];
  for (const { key, name, help } of PLAIN_DEVICE_GAUGES) {
    const g = new Gauge({ name, help, labelNames: ['device_id'], registers: [registry] });
    setters.push(() => {
      g.reset();
      for (const s of all) {
        const v = s[key];
        if (v !== null) g.set({ device_id: s.device_id }, Number(v));
      }
    });
  }
  for (const { key, name, help, label, values } of DEVICE_STATE_SETS) {
    const g = new Gauge({ name, help, labelNames: ['device_id', label], registers: [registry] });
    setters.push(() => {
      g.reset();
      for (const s of all) {
        const current = s[key];
        if (current === null || !values.includes(current)) continue;
        for (const v of values) g.set({ device_id: s.device_id, [label]: v }, v === current ? 1 : 0);
      }
    });
  }
  return async () => {
    for (const set of setters) set();
    return registry.metrics();
  };
}

async function gaugesAlone(): Promise<void> {
  const all = samples();
  const baseline = promClientText(all);
  const ours = deviceGaugesText(all);
  if ((await baseline()) !== ours) throw new Error('deviceGaugesText and the prom-client gauges wrote different texts');
  const t = { ours: [] as number[], prom: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (['ours', 'prom'] as const) : (['prom', 'ours'] as const);
    for (const which of order) {
      const started = performance.now();
      if (which === 'ours') deviceGaugesText(all);
      else await baseline();
      t[which].push(ms(started));
    }
  }
  const series = ours.split('\n').filter((l) => l.startsWith('lookout_device_')).length;
  console.log(
    `per-device gauges, ${DEVICES} devices (${series} series, ${(ours.length / 1e6).toFixed(1)} MB): deviceGaugesText median ${median(t.ours).toFixed(1)} ms, ` +
      `prom-client gauges (baseline) ${median(t.prom).toFixed(1)} ms; ratio ${(median(t.prom) / median(t.ours)).toFixed(1)}x`,
  );
}

async function hubScrape(): Promise<void> {
  const hub = await startHub({
    anonymousBroker: true,
    port: 0,
    brokerPort: 0,
    dataDir: '/tmp/lookout-hub-metrics-scrape-bench-nonexistent',
    stateStore: new MemoryStateStore(),
    deviceNetworks: ['127.0.0.1/32'],
    logger: createLogger({ level: 'silent' }),
    env: { READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '600000' },
  });
  const bus = await mqttClient(hub.brokerUrl);
  try {
    for (let i = 0; i < DEVICES; i += 500) {
      const sent: Promise<void>[] = [];
      for (let j = i; j < Math.min(DEVICES, i + 500); j++) {
        const id = deviceId(j);
        sent.push(
          publish(bus, `devices/${id}/hello`, hello(id), { qos: 1 }),
          publish(bus, `devices/${id}/status`, msg.status(id), { qos: 1, retain: true }),
          publish(bus, `devices/${id}/telemetry`, msg.telemetry(), { qos: 1 }),
          publish(bus, `devices/${id}/dets`, msg.dets(1, 7), { qos: 1 }),
        );
      }
      await Promise.all(sent);
    }
    const times: number[] = [];
    let text = '';
    for (let r = 0; r < ROUNDS; r++) {
      const started = performance.now();
      text = await (await fetch(`${hub.url}/metrics`)).text();
      times.push(ms(started));
    }
    const online = text.split('\n').filter((l) => l.startsWith('lookout_device_online{') && l.endsWith(' 1')).length;
    const series = text.split('\n').filter((l) => l.startsWith('lookout_device_')).length;
    console.log(
      `GET /metrics of a hub with ${DEVICES} devices (${online} online): median ${median(times).toFixed(0)} ms (client in the same process), ` +
        `${(text.length / 1e6).toFixed(1)} MB, ${series} per-device series`,
    );
  } finally {
    await endClient(bus);
    await hub.close();
  }
}

await gaugesAlone();
await hubScrape();
