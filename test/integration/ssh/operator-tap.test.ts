/**
 * `lookout tap` against a real mosquitto and a real lookout-edge (simulated sensors): the session's
 * bus goes to JSONL, the summary has the rates per topic and the device's figures; Ctrl-C (SIGINT)
 * ends it cleanly; an unreachable broker is exit 5.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { freePort } from '../../support/free-port.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { waitFor } from '../../support/wait-for.js';
import { cleanEnv, runLookout, spawnLookout } from '../../support/operator-helpers.js';

describe('lookout tap (real mosquitto and lookout-edge)', () => {
  let scratch: ScratchDir;
  let broker: Mosquitto;
  let device: DeviceProcess;

  before(async () => {
    scratch = await scratchDir('operator-tap-');
    broker = await startMosquitto();
    device = await startDeviceProcess({ deviceId: 'cam-tap', mqtt: broker.url, layer: 'layer2' });
  });

  after(async () => {
    await device?.stop();
    await broker?.stop();
    await scratch?.cleanup();
  });

  it('writes the session to JSONL and sums up the rates per topic and the device figures', async () => {
    const out = join(scratch.dir, 'tap.jsonl');
    const r = await runLookout(['tap', 'cam-tap', '--mqtt', broker.url, '--out', out, '--duration-s', '4', '--json'], cleanEnv({}));
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout) as {
      messages: number;
      topics: Record<string, { messages: number; rate_hz: number }>;
      devices: Record<string, { persons_max: number; thermal_state: string | null; layer: string | null }>;
    };
    assert.ok(summary.topics['cam-tap dets']?.messages > 0 && summary.topics['cam-tap dets'].rate_hz > 0, JSON.stringify(summary.topics));
    assert.ok(summary.topics['cam-tap telemetry']?.messages > 0, JSON.stringify(summary.topics));
    assert.ok(summary.devices['cam-tap'], JSON.stringify(summary.devices));
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    assert.equal(lines.length, summary.messages);
    const first = JSON.parse(lines[0]) as { t: string; topic: string; payload?: unknown };
    assert.match(first.topic, /^(devices|shadow)\/cam-tap\//);
    assert.ok(Date.parse(first.t) > 0);
  });

  it('ends on Ctrl-C (SIGINT) with its summary; an unreachable broker is exit 5', async () => {
    const out = join(scratch.dir, 'tap-int.jsonl');
    const child = spawnLookout(['tap', 'all', '--mqtt', broker.url, '--out', out, '--json'], cleanEnv({}));
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await waitFor(
      () => {
        try {
          return readFileSync(out, 'utf8').split('\n').length > 5;
        } catch {
          return false;
        }
      },
      'tapped messages',
      15_000,
    );
    child.kill('SIGINT');
    assert.equal(await exited, 0);
    // The summary counts what the tap wrote, however many came in before the signal.
    const written = readFileSync(out, 'utf8').trim().split('\n').length;
    assert.ok(written >= 5);
    assert.equal((JSON.parse(stdout) as { messages: number }).messages, written);

    const port = await freePort();
    const r = await runLookout(['tap', 'cam-tap', '--mqtt', `mqtt://127.0.0.1:${port}`, '--duration-s', '1'], cleanEnv({}));
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /^bus_unreachable: /);
  });
});
