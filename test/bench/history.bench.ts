/**
 * The fleet history's cost (issue 29 item 1).
 *
 * 1. Ingest per message with the history on vs off, in the same run: a real hub (embedded broker,
 *    in this process) takes LOOKOUT_BENCH_MESSAGES dets messages of 20 devices (three persons and a
 *    car, tracked) from one publisher; CPU time of the process (hub, broker and publisher alike in
 *    both modes) and wall time until the bus cache counted every one, per message. Modes alternate
 *    over LOOKOUT_BENCH_ROUNDS rounds; the median is reported, with the ratio off / on (aim ≥ 0.95).
 * 2. A day's query for 100 devices: 100 × 1440 minutes written as flushes would (one transaction per
 *    minute of the fleet), then the people seen over the day at all 100, and one device's day in
 *    hourly buckets, median of 5.
 *
 *   npm run bench -- history
 *   LOOKOUT_BENCH_MESSAGES=5000 LOOKOUT_BENCH_ROUNDS=1 node dist/test/bench/history.bench.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bucketsOf, peopleSeen } from '../../hub/plugins/fleet-history/src/history-queries.js';
import type { MinuteRow } from '../../hub/plugins/fleet-history/src/service.js';
import { SqliteHistoryStore } from '../../hub/plugins/fleet-history/src/sqlite-history-store.js';
import { api, endClient, mqttClient, msg, publish, sleep, testHub, waitFor } from '../support/hub-helpers.js';

const MESSAGES = Number(process.env.LOOKOUT_BENCH_MESSAGES ?? 20_000);
const ROUNDS = Number(process.env.LOOKOUT_BENCH_ROUNDS ?? 3);
const DEVICES = 20;

function dets(i: number): Record<string, unknown> {
  const t = Math.floor(i / 50);
  return {
    timestamp: new Date().toISOString(),
    camera_id: 'front_door',
    dets: [
      { c: 0, p: 0.9, b: [1, 2, 30, 40], track_id: t },
      { c: 0, p: 0.8, b: [5, 2, 30, 40], track_id: t + 1 },
      { c: 0, p: 0.7, b: [9, 2, 30, 40], track_id: t + 2 },
      { c: 2, p: 0.9, b: [50, 2, 90, 40], track_id: 1000 + t },
    ],
    person_count: 3,
    rf_detr_precomputed: true,
  };
}

async function ingestRun(history: boolean): Promise<{ cpuUsPerMsg: number; wallUsPerMsg: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'history-bench-'));
  const hub = await testHub({ dataDir, env: { LOOKOUT_HISTORY_DB: history ? undefined : 'off', LOOKOUT_HISTORY_FLUSH_MS: '1000' } });
  const client = await mqttClient(hub.brokerUrl);
  try {
    const counted = async () => (await api(hub.url, '/fleet/mqtt/config')).body.ingest.messages - DEVICES;
    // The hub holds a device's messages until its hello.
    for (let d = 0; d < DEVICES; d++) await publish(client, `devices/bench-${d}/hello`, msg.hello(`bench-${d}`, ['127.0.0.1'], 9, [`spot-${d}`]));
    await waitFor('every bench device registered', async () => ((await api(hub.url, '/fleet/registry')).body.shadows?.length ?? 0) >= DEVICES, 30_000);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    // QoS 1 in windows of 200 in flight: the broker drops nothing, the publisher never waits long.
    for (let i = 0; i < MESSAGES; i += 200) {
      const batch = Array.from({ length: Math.min(200, MESSAGES - i) }, (_, k) => publish(client, `devices/bench-${(i + k) % DEVICES}/dets`, dets(i + k)));
      await Promise.all(batch);
    }
    for (let n = 0, last = -1, still = 0; (n = await counted()) < MESSAGES; last = n) {
      still = n === last ? still + 1 : 0;
      if (still > 250)
        throw new Error(`the hub counted ${n} of ${MESSAGES} messages and no more: ${JSON.stringify((await api(hub.url, '/fleet/mqtt/config')).body.ingest)}`);
      await sleep(20);
    }
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return { cpuUsPerMsg: (cpu.user + cpu.system) / MESSAGES, wallUsPerMsg: (wall * 1000) / MESSAGES };
  } finally {
    await endClient(client);
    await hub.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function ingest(): Promise<void> {
  const on: { cpuUsPerMsg: number; wallUsPerMsg: number }[] = [];
  const off: typeof on = [];
  await ingestRun(true); // warm-up (JIT, first database): not counted
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of r % 2 === 0 ? [true, false] : [false, true]) (mode ? on : off).push(await ingestRun(mode));
  }
  const cpuOn = median(on.map((x) => x.cpuUsPerMsg));
  const cpuOff = median(off.map((x) => x.cpuUsPerMsg));
  const wallOn = median(on.map((x) => x.wallUsPerMsg));
  const wallOff = median(off.map((x) => x.wallUsPerMsg));
  console.log(`ingest of ${MESSAGES} dets messages (${DEVICES} devices), median of ${ROUNDS} rounds:`);
  console.log(`  history off: ${cpuOff.toFixed(1)} µs CPU/msg, ${wallOff.toFixed(1)} µs wall/msg`);
  console.log(`  history on : ${cpuOn.toFixed(1)} µs CPU/msg, ${wallOn.toFixed(1)} µs wall/msg`);
  console.log(`  throughput ratio on/off by CPU: ${(cpuOff / cpuOn).toFixed(3)}, by wall: ${(wallOff / wallOn).toFixed(3)} (aim ≥ 0.95)`);
}

function dayQuery(): void {
  const dir = mkdtempSync(join(tmpdir(), 'history-bench-day-'));
  const store = new SqliteHistoryStore(join(dir, 'h.sqlite'));
  try {
    const devices = Array.from({ length: 100 }, (_, i) => `cam-${i}`);
    const day0 = Date.UTC(2026, 10, 26);
    const w0 = performance.now();
    for (let m = 0; m < 1440; m++) {
      const at = day0 + m * 60_000;
      const rows: MinuteRow[] = devices.map((deviceId) => ({
        deviceId,
        minute: at,
        frames: 600,
        personMax: 3,
        personSum: 1200,
        classes: { 0: { max: 3, sum: 1200, tracks: [m, m + 1, m + 2] }, 2: { max: 1, sum: 300, tracks: [10_000 + m] } },
        lastSeen: { 0: at + 59_000, 2: at + 30_000 },
        thermalState: 'NORMAL',
        suspended: false,
        storageHealth: 'OK',
      }));
      store.write(rows, []);
    }
    const writeMs = performance.now() - w0;
    const times = { people: [] as number[], buckets: [] as number[] };
    let answer: ReturnType<typeof peopleSeen> | undefined;
    for (let i = 0; i < 5; i++) {
      const q0 = performance.now();
      answer = peopleSeen(store, devices, day0, day0 + 86_400_000);
      times.people.push(performance.now() - q0);
      const b0 = performance.now();
      bucketsOf(store.minutes(['cam-7'], day0, day0 + 86_400_000), day0, 3_600_000);
      times.buckets.push(performance.now() - b0);
    }
    console.log(
      `a day of 100 devices: ${100 * 1440} minutes written in ${(writeMs / 1440).toFixed(2)} ms per flush of 100 minutes; ${(store.usage().bytes / 1e6).toFixed(1)} MB`,
    );
    console.log(
      `  people seen over the day at all 100 devices: median ${median(times.people).toFixed(1)} ms (${answer!.unique_person_tracks} tracks, ${answer!.frames} frames)`,
    );
    console.log(`  one device's day in hourly buckets: median ${median(times.buckets).toFixed(1)} ms`);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await ingest();
dayQuery();
