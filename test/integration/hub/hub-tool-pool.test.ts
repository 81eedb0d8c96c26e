/**
 * The hub's pooled connection to a real device's tool server (`lookout-edge` with the hub test
 * tools, test/fixtures/hub-tools-plugin) behind a TCP proxy the test can cut
 * (test/support/cut-proxy.ts): one call's failure is that call's alone. A burst with calls that time
 * out gave 502 "Connection closed" to the calls in flight beside them; a call queued behind others
 * was timed out for their time; one connection cut failed every call on the client.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { DEVICE_REGISTRY } from '../../../hub/plugins/registry/src/service.js';
import { DEVICE_TOOLS } from '../../../hub/plugins/tools-proxy/src/service.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startCutProxy, type CutProxy } from '../../support/cut-proxy.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { callTool, sleep, testHub, waitFor, type Answer } from '../../support/hub-helpers.js';

/** Hub A: the burst and the cut connections. */
const TIMEOUT_MS = 8000;
const CONCURRENCY = 8;
/** Hub B: one call at a time, for the queued call's timeout. */
const QUEUED_TIMEOUT_MS = 3000;

describe('the hub’s device connection: one call’s failure is that call’s alone', () => {
  let proxy: CutProxy;
  let device: DeviceProcess;
  let hub: RunningHub;
  let single: RunningHub;
  let dir: string;

  before(async () => {
    let devicePort = 0;
    proxy = await startCutProxy(() => devicePort);
    dir = mkdtempSync(join(tmpdir(), 'hub-tool-pool-'));
    const registryFile = join(dir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-pool', ips: ['127.0.0.1'], tool_port: proxy.port }] }));
    const env = { READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '600000', LOOKOUT_HUB_TOOL_QUEUE: '1000' };
    hub = await testHub({ dataDir: dir, registryFile, toolTimeoutMs: TIMEOUT_MS, env: { ...env, LOOKOUT_HUB_TOOL_CONCURRENCY: String(CONCURRENCY) } });
    single = await testHub({ registryFile, toolTimeoutMs: QUEUED_TIMEOUT_MS, env: { ...env, LOOKOUT_HUB_TOOL_CONCURRENCY: '1' } });
    device = await startDeviceProcess({
      deviceId: 'cam-pool',
      image: join(packageRoot(), 'test', 'fixtures', 'images', 'hub-camera.json'),
      mqtt: hub.brokerUrl,
    });
    devicePort = device.ready.ports.tools;
    // The client pooled, and the tools' annotations read (what the pool may retry).
    const tools = hub.runtime.service(DEVICE_TOOLS)!;
    await tools.listTools(hub.runtime.service(DEVICE_REGISTRY)!.resolve('cam-pool'), new AbortController().signal);
  });

  after(async () => {
    await device?.stop();
    await hub?.close();
    await single?.close();
    await proxy?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const statuses = (answers: Answer[]) => answers.reduce<Record<number, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {});

  it('a burst of 300 queued calls where some time out: 504 for those, 200 for every other, no 502', async () => {
    // The slow calls hold half the slots until they time out; the burst comes halfway there, so
    // calls are in flight beside them when they do, and every queued call gets a slot within the
    // tool timeout (296 calls of 20 ms on 4 slots, then 8: seconds to spare on a loaded 2-core machine).
    const slow = Array.from({ length: CONCURRENCY / 2 }, () => callTool(hub.url, 'cam-pool', 'sleep_ms', { ms: 60_000 }));
    await waitFor('the slow calls at the device', () => proxy.awaiting('sleep_ms') === CONCURRENCY / 2);
    await sleep(TIMEOUT_MS / 2);
    const fast = Array.from({ length: 300 - CONCURRENCY / 2 }, () => callTool(hub.url, 'cam-pool', 'wait_ms', { ms: 20 }));
    const [slowAnswers, fastAnswers] = await Promise.all([Promise.all(slow), Promise.all(fast)]);
    assert.deepEqual(statuses(slowAnswers), { 504: CONCURRENCY / 2 }, slowAnswers.find((r) => r.status !== 504)?.text);
    for (const r of slowAnswers) assert.equal(r.body.error.code, 'device_timeout');
    assert.deepEqual(statuses(fastAnswers), { 200: fast.length }, fastAnswers.find((r) => r.status !== 200)?.text);
    // The timed-out calls were cancelled at the device: their exchanges ended, the tool did not run on for a minute.
    await waitFor('the timed-out calls ended at the device', () => proxy.awaiting('sleep_ms') === 0, 5000);
  });

  it('a call queued behind another gets its whole timeout from when it is sent', async () => {
    // One slot: the second call waits 0.6 of the timeout, then runs for 0.6 of it.
    const ms = (QUEUED_TIMEOUT_MS * 6) / 10;
    const [first, second] = await Promise.all([
      callTool(single.url, 'cam-pool', 'sleep_ms', { ms }),
      sleep(50).then(() => callTool(single.url, 'cam-pool', 'sleep_ms', { ms })),
    ]);
    assert.equal(first.status, 200, first.text);
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.result.slept_ms, ms);
  });

  it('a cut connection fails no other call; calls of idempotent tools on it are retried on a fresh one', async () => {
    const calls = (tool: string, n: number) => Array.from({ length: n }, () => callTool(hub.url, 'cam-pool', tool, { ms: 1500 }));
    // One connection cut among eight calls in flight: the call on it was of a read-only tool.
    let writes = calls('sleep_ms', 4);
    let reads = calls('wait_ms', 4);
    await waitFor('eight calls at the device', () => proxy.awaiting('sleep_ms') === 4 && proxy.awaiting('wait_ms') === 4);
    assert.equal(proxy.cut('wait_ms', 1), 1);
    for (const r of await Promise.all([...writes, ...reads])) {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.result.slept_ms, 1500);
    }
    // Every connection cut under calls of a read-only tool: each is run again on a fresh connection.
    reads = calls('wait_ms', 6);
    await waitFor('six calls at the device', () => proxy.awaiting('wait_ms') === 6);
    assert.equal(proxy.cut('wait_ms'), 6);
    for (const r of await Promise.all(reads)) assert.equal(r.status, 200, r.text);
    // A call of a tool that declares nothing is not run twice behind the caller: its failure is its own.
    writes = calls('sleep_ms', 1);
    reads = calls('wait_ms', 2);
    await waitFor('three calls at the device', () => proxy.awaiting('sleep_ms') === 1 && proxy.awaiting('wait_ms') === 2);
    assert.equal(proxy.cut('sleep_ms'), 1);
    const [write] = await Promise.all(writes);
    assert.equal(write.status, 502, write.text);
    assert.equal(write.body.error.code, 'device_unreachable');
    for (const r of await Promise.all(reads)) assert.equal(r.status, 200, r.text);
  });
});
