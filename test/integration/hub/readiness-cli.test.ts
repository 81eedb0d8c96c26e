/**
 * `lookout readiness` as a process against a real hub (bearer token, readiness plugin, the bus in
 * memory): a device announced by hello whose tool server is not there is graded not_ready; the CLI
 * prints the table and the reasons and exits 1; --json gives the hub's answer as it came; the
 * token comes from LOOKOUT_HUB_TOKEN and is never printed; a wrong or missing token and a bad
 * --hub are said plainly. The table and the exit status of ready and degraded fleets are checked
 * from recorded grades.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import readiness from '../../../hub/plugins/readiness/src/index.js';
import { fleetGrade, viewOf } from '../../../hub/plugins/readiness/src/fleet-grade.js';
import { gradeDevice } from '../../../hub/plugins/readiness/src/grade-device.js';
import { READINESS_MODULES } from '../../../hub/plugins/readiness/src/readiness-schemas.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { readinessExitCode, readinessTable, type ReadinessBody } from '../../../operator/src/readiness-table.js';
import { NOW, peerAck, recordedFacts, recording } from '../../unit/hub/plugins/readiness/recorded-facts.js';
import { api, msg, testHub, waitFor } from '../../support/hub-helpers.js';

const run = promisify(execFile);
const CLI = join(packageRoot(), 'bin', 'lookout.js');
const TOKEN = 'readiness-cli-hub-token-5b2e';
const DEVICE = 'cam-cli';

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function lookout(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  const childEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'readiness', ...args], { env: childEnv });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A port nothing listens on: taken and released at once. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('lookout readiness', () => {
  let hub: RunningHub;
  let bus: MemoryBus;

  before(async () => {
    bus = new MemoryBus();
    const set = await loadHubPluginSet();
    hub = await testHub({
      bus,
      token: TOKEN,
      host: '127.0.0.1',
      plugins: [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'readiness'), readiness],
      essential: set.essential,
      toolTimeoutMs: 2000,
      env: { READINESS_RECHECK_DELAY_MS: '50', READINESS_CHECK_TIMEOUT_MS: '4000' },
    });
    const hello = msg.hello(DEVICE, ['127.0.0.1'], await closedPort());
    await bus.publish(`devices/${DEVICE}/hello`, JSON.stringify(hello));
    await bus.publish(`devices/${DEVICE}/status`, JSON.stringify(msg.status(DEVICE)));
    await waitFor('the device graded', async () => {
      const r = await api(hub.url, `/fleet/readiness`, { token: TOKEN });
      return r.body.devices?.[DEVICE] ? true : undefined;
    });
  });

  after(async () => {
    await hub?.close();
    await bus?.close();
  });

  it('prints the fleet, a row per device and why it is not ready, and exits 1', async () => {
    const r = await lookout(['--hub', hub.url], { LOOKOUT_HUB_TOKEN: TOKEN });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^fleet not_ready: 1 of 1 devices not ready/);
    assert.match(r.stdout, new RegExp(`^${DEVICE}\\s+not_ready\\s+\\d+s ago\\s+NOT\\s+NOT\\s+NOT\\s+NOT\\s+NOT`, 'm'));
    assert.match(r.stdout, /^ {2}mcp_health not_ready: the device did not answer get_system_health through the hub: device_unreachable/m);
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(TOKEN));
  });

  it('--json prints the hub’s answer as it came', async () => {
    const r = await lookout(['--hub', hub.url, '--json'], { LOOKOUT_HUB_TOKEN: TOKEN });
    assert.equal(r.code, 1, r.stderr);
    const body = JSON.parse(r.stdout) as ReadinessBody;
    assert.equal(body.fleet.grade, 'not_ready');
    assert.deepEqual(body.modules, [...READINESS_MODULES]);
    assert.equal(body.devices[DEVICE].modules.mcp_health.grade, 'not_ready');
  });

  it('says where the token comes from when it is missing or wrong, never printing it', async () => {
    const missing = await lookout(['--hub', hub.url], { LOOKOUT_HUB_TOKEN: undefined });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /401 unauthorized.*set LOOKOUT_HUB_TOKEN/);
    const wrong = await lookout(['--hub', hub.url], { LOOKOUT_HUB_TOKEN: 'not-the-token-at-all' });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /LOOKOUT_HUB_TOKEN is not its token/);
    assert.doesNotMatch(wrong.stderr, /not-the-token-at-all/);
  });

  it('refuses a bad --hub as a usage error (exit 2), and says when the hub cannot be reached', async () => {
    const bad = await lookout(['--hub', 'ftp://127.0.0.1:1'], {});
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^config_invalid: --hub must be an http or https URL/);
    const withCredentials = await lookout(['--hub', `http://user:${TOKEN}@127.0.0.1:1`], {});
    assert.equal(withCredentials.code, 2);
    assert.doesNotMatch(withCredentials.stderr, new RegExp(TOKEN));
    const down = await lookout(['--hub', `http://127.0.0.1:${await closedPort()}`], {});
    assert.equal(down.code, 1);
    assert.match(down.stderr, /cannot reach the hub at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  });

  it('exits 0 for a ready fleet and 3 for a degraded one (recorded grades)', () => {
    const ready = (id: string) =>
      viewOf(gradeDevice(recordedFacts({ deviceId: id, peerHello: { ok: true, value: peerAck({ device_id: id }) } }), 'h'), NOW, 1e6);
    const writingWarning = { ok: true as const, value: recording({ storage_health: 'WARNING', recommendation: 'storage 85% used' }) };
    const degraded = viewOf(
      gradeDevice(recordedFacts({ deviceId: 'cam-2', peerHello: { ok: true, value: peerAck({ device_id: 'cam-2' }) }, recording: writingWarning }), 'h'),
      NOW,
      1e6,
    );
    const body = (devices: ReturnType<typeof ready>[]): ReadinessBody => ({
      fleet: fleetGrade(devices, []),
      devices: Object.fromEntries(devices.map((d) => [d.device_id, d])),
      modules: [...READINESS_MODULES],
    });
    const allReady = body([ready('cam-1')]);
    assert.equal(readinessExitCode(allReady.fleet.grade), 0);
    assert.match(readinessTable(allReady), /^cam-1\s+ready\s+0s ago\s+(ok\s+){10}ok$/m);
    const someDegraded = body([ready('cam-1'), degraded]);
    assert.equal(readinessExitCode(someDegraded.fleet.grade), 3);
    const table = readinessTable(someDegraded);
    assert.match(table, /^cam-2\s+degraded\s+0s ago\s+ok\s+ok\s+ok\s+ok\s+ok\s+ok\s+DEG/m);
    assert.match(table, /^cam-2 \(degraded\):\n {2}recorder degraded: storage WARNING: storage 85% used$/m);
  });
});
