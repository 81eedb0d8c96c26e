/**
 * `lookout soak` (and soak-gate reading the die on the bus) of a real simulated lookout-edge (camera image, layer2: detector, encoder, recorder)
 * whose data root is reached through a real OpenSSH sshd on loopback, its bus through a real
 * mosquitto: the watchers sample rates, thermal, storage and the recorder; --tap records the bus,
 * --visual takes a snapshot from a real chunk. The thermal zone is a file the test sets (a device's
 * sysfs; the simulated die-temp plugin reads no file).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { waitFor } from '../../support/wait-for.js';
import { cleanEnv, runLookout } from '../../support/operator-helpers.js';

describe('lookout soak (real sshd, mosquitto and lookout-edge)', () => {
  let scratch: ScratchDir;
  let sshd: Sshd;
  let broker: Mosquitto;
  let device: DeviceProcess;
  let root: string;
  let env: NodeJS.ProcessEnv;
  let zone: string;

  before(async () => {
    scratch = await scratchDir('operator-soak-');
    root = join(scratch.dir, 'device');
    zone = join(root, 'sys/class/thermal/thermal_zone0');
    mkdirSync(zone, { recursive: true });
    writeFileSync(join(zone, 'temp'), '51000\n');
    [sshd, broker] = await Promise.all([startSshd(), startMosquitto()]);
    device = await startDeviceProcess({
      deviceId: 'cam-soak',
      mqtt: broker.url,
      layer: 'layer2',
      dataDir: root,
      env: { CHUNK_SECONDS: '1', STATUS_INTERVAL_MS: '200' },
    });
    await waitFor(() => readdirSync(join(root, 'data/recordings')).some((n) => n.endsWith('.json') && !n.startsWith('.')), 'a complete chunk', 60_000).catch(
      (err: Error) => {
        throw new Error(`${err.message}\n${device.logs().slice(-3000)}`);
      },
    );
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    env = cleanEnv({ LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts, LOOKOUT_MQTT_URL: broker.url });
  });

  after(async () => {
    await device?.stop();
    await Promise.all([sshd?.stop(), broker?.stop()]);
    await scratch?.cleanup();
  });

  const soak = (out: string, extra: string[] = []) =>
    runLookout(
      [
        'soak',
        `127.0.0.1:${sshd.port}`,
        '--device-id',
        'cam-soak',
        '--root',
        root,
        '--minutes',
        '0.08',
        '--interval-s',
        '1.5',
        '--out',
        out,
        '--json',
        '--rate-hz',
        '0.1-100',
        ...extra,
      ],
      env,
      60_000,
    );

  it('watches rates, thermal, storage and the recorder; --tap and --visual leave the bus and a snapshot', async () => {
    const out = join(scratch.dir, 'soak-ok');
    const r = await soak(out, ['--tap', '--visual']);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const verdict = JSON.parse(r.stdout) as { passed: boolean; samples: number; max_celsius: number };
    assert.equal(verdict.passed, true);
    assert.equal(verdict.max_celsius, 51);
    const samples = readFileSync(join(out, 'samples.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { dets_hz: number | null; frames: number; storage: string });
    assert.equal(samples.length, verdict.samples);
    // A last window cut short by a slow sample (a loaded machine) is written without rates (null): the rates are the judged windows'.
    const judged = samples.filter((s) => s.dets_hz !== null);
    assert.ok(judged.length > 0 && judged.at(-1)!.dets_hz! > 0 && samples.at(-1)!.frames > 0, JSON.stringify(samples));
    assert.ok(['OK', 'WARNING', 'CRITICAL'].includes(samples[0].storage));
    assert.ok(readFileSync(join(out, 'bus.jsonl'), 'utf8').includes('"topic":"devices/cam-soak/dets"'));
    const shots = readdirSync(join(out, 'snapshots'));
    assert.equal(shots.length, 1);
    assert.deepEqual([...readFileSync(join(out, 'snapshots', shots[0])).subarray(0, 2)], [0xff, 0xd8]);
    assert.ok(existsSync(join(out, 'verdict.json')));
  });

  it('soak-gate --temp-source bus takes the die temperature the device reports and passes on a real encoder', async () => {
    const r = await runLookout(
      [
        'soak-gate',
        `127.0.0.1:${sshd.port}`,
        '0.05',
        '--device-id',
        'cam-soak',
        '--root',
        root,
        '--interval-s',
        '1',
        '--temp-source',
        'bus',
        '--min-rate',
        '0.05',
        '--json',
      ],
      env,
      60_000,
    );
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const verdict = JSON.parse(r.stdout) as { passed: boolean; max_celsius: number; frames_grown: number };
    assert.equal(verdict.passed, true);
    // The simulated die of people-crossing, not the zone file's 51 C. (--min-rate is low: this test is not about speed,
    // and a loaded test machine encodes below the nominal fps.)
    assert.notEqual(verdict.max_celsius, 51);
    assert.ok(verdict.frames_grown > 0);
    assert.ok(existsSync(join(root, 'data/config/soak_gate_pass.json')));
  });

  it('a die at THERMAL_WARN fails the soak with exit 7 and the reason', async () => {
    writeFileSync(join(zone, 'temp'), '80000\n');
    try {
      const r = await soak(join(scratch.dir, 'soak-hot'));
      assert.equal(r.code, 7, r.stderr);
      assert.match(r.stderr, /^soak_gate_failed: cam-soak: .*die temperature 80\.0 C reached THERMAL_WARN \(75 C\)/);
    } finally {
      writeFileSync(join(zone, 'temp'), '51000\n');
    }
  });
});
