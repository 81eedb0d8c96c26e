/**
 * Helpers shared by the hub tests (unit and integration): HTTP calls against a running hub, spec-
 * shaped bus messages, polling. Not a test file itself (no `.test.` in its name).
 */
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { createLogger } from '../../core/src/log/logger.js';
import { LogRing } from '../../core/src/log/log-ring.js';
import { startHub, type RunningHub } from '../../hub/src/start-hub.js';
import type { HubOptions } from '../../hub/src/hub-options.js';
import { MemoryStateStore } from '../../hub/src/state/memory-state-store.js';

export interface Answer<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export async function api<T = any>(base: string, path: string, init: RequestInit & { json?: unknown; token?: string } = {}): Promise<Answer<T>> {
  const headers = new Headers(init.headers);
  if (init.json !== undefined) headers.set('content-type', 'application/json');
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  const { json, token: _token, ...rest } = init;
  const res = await fetch(base + path, { ...rest, headers, ...(json !== undefined ? { body: JSON.stringify(json), method: rest.method ?? 'POST' } : {}) });
  const text = await res.text();
  let body: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
  return { status: res.status, body: body as T, text, headers: res.headers };
}

export function callTool(base: string, target: string, tool: string, args: Record<string, unknown> = {}, token?: string): Promise<Answer> {
  return api(base, `/tools/call?target=${encodeURIComponent(target)}`, { json: { tool, arguments: args }, ...(token ? { token } : {}) });
}

/** Polls until `check` returns a value (not undefined/false) or fails with the last state. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? String(last) : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${why}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The fleet secret of test hubs: tests derive device credentials from it (lookout device-credentials does the same). */
export const TEST_FLEET_SECRET = 'lookout-test-fleet-secret-7d1c';

/**
 * A hub for tests: free ports, a temp data dir when none given, quiet logs, no process metrics.
 * Its embedded broker is anonymous unless `anonymousBroker: false` is given: most hub tests play
 * many devices from one client; the bus identity tests (bus-identity.test.ts) use the default.
 * Without a data dir its state stays in memory: hubs of parallel tests share that default folder,
 * and one test's devices must not appear in the next one's hub.
 */
export function testHub(options: HubOptions = {}): Promise<RunningHub> {
  // The hub keeps its log lines (GET /debug/log/tail) as lookout-hub does.
  const logRing = new LogRing();
  return startHub({
    anonymousBroker: true,
    fleetSecret: TEST_FLEET_SECRET,
    port: 0,
    brokerPort: 0,
    dataDir: options.dataDir ?? '/tmp/lookout-hub-tests-nonexistent',
    ...(options.dataDir === undefined ? { stateStore: new MemoryStateStore() } : {}),
    defaultMetrics: false,
    logger: createLogger({ level: process.env.LOOKOUT_LOG_LEVEL ?? 'silent', ring: logRing }),
    logRing,
    ...options,
    // Without a data dir the fleet history's database lives in memory too (parallel hubs share that folder).
    env: { ...(options.dataDir === undefined ? { LOOKOUT_HISTORY_DB: ':memory:' } : {}), ...options.env },
  });
}

export function mqttClient(url: string, options: Pick<IClientOptions, 'username' | 'password' | 'clientId' | 'will'> = {}): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = connect(url, { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 5000, ...options });
    client.once('connect', () => resolve(client));
    client.once('error', (err) => {
      client.end(true);
      reject(err);
    });
  });
}

export function publish(client: MqttClient, topic: string, payload: unknown, options: { qos?: 0 | 1; retain?: boolean } = {}): Promise<void> {
  const body = Buffer.isBuffer(payload) || typeof payload === 'string' ? payload : JSON.stringify(payload);
  return new Promise((resolve, reject) =>
    client.publish(topic, body, { qos: options.qos ?? 1, retain: options.retain ?? false }, (err) => (err ? reject(err) : resolve())),
  );
}

export function endClient(client: MqttClient): Promise<void> {
  return new Promise((resolve) => client.end(false, {}, () => resolve()));
}

const now = () => new Date().toISOString();

/** Spec-shaped messages (spec 01 and DESIGN.md wire decisions). */
export const msg = {
  status: (deviceId: string, state: 'online' | 'offline' = 'online', dieTemp = 47.5) => ({
    state,
    thermal_state: 'NORMAL',
    die_temp_c: dieTemp,
    timestamp: now(),
    device_id: deviceId,
  }),
  telemetry: (dieTemp = 47.5, fps = 10) => ({
    timestamp: now(),
    camera_id: 'front_door',
    detections: [{ c: 0, p: 0.9, b: [10, 20, 110, 220] }],
    telemetry: { die_temp: dieTemp, fps },
  }),
  dets: (n = 1, trackId = 7) => ({
    timestamp: now(),
    camera_id: 'front_door',
    dets: Array.from({ length: n }, (_, i) => ({ c: 0, p: 0.8, b: [10 + i, 20, 110, 220], track_id: trackId + i })),
    person_count: n,
    rf_detr_precomputed: true,
  }),
  health: (deviceId: string, storage: 'OK' | 'WARNING' | 'CRITICAL' = 'OK') => ({
    timestamp: now(),
    status: 'ok',
    storage_health: storage,
    cert_fingerprint_present: true,
    serial: `SER-${deviceId}`,
    role: 'front_door',
    storage: { free_gb: 12.5, used_pct: storage === 'OK' ? 40 : storage === 'WARNING' ? 85 : 97, chunk_count: 3 },
    device_id: deviceId,
  }),
  hello: (deviceId: string, ips: string[], toolPort: number, labels = ['front_door']) => ({
    timestamp: now(),
    device_id: deviceId,
    labels,
    roles: ['camera'],
    ips,
    ports: { tools: toolPort },
    image: 'camera',
    layer: 'layer2',
    versions: { runtime: '0.1.0' },
  }),
  manifest: (names: string[]) => ({
    timestamp: now(),
    chunks: names.map((name, i) => ({
      name,
      started_at: new Date(Date.now() - (names.length - i) * 60_000).toISOString(),
      duration_s: 60,
      keyframe_count: 60,
      justified: i % 2 === 0,
      rfdetr_stride_fps: 10,
    })),
    reason: 'boot',
  }),
  incident: (text = 'person in restricted zone') => ({ timestamp: now(), type: 'incident', message: text }),
};
