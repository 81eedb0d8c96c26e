import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MqttBus } from 'lookout/lib/mqtt';
import { WIRE_LIMITS } from 'lookout/core/contracts';
import { LookoutError, resolveLayer, packageRoot, type LayerId } from 'lookout/core';
import { EXIT } from './exit-codes.js';
import { BASE_EXITS, defineCommand } from './command-spec.js';
import { TapRecorder } from './tap/tap-session.js';

const USAGE = 'lookout soak-matrix --scenarios <a,b> --layers <l0,l2> [--seconds 60] [--mqtt <url>] [--json]';

const ABOUT = `The matrix soak (spec 02's batch_soak_scenarios): every scenario × layer on a simulated device
(lookout-edge --source sim with SIM_SCENARIO, started here, one at a time), watched on the bus for
--seconds after a warm-up. A cell passes when no plugin failed and telemetry flows; from layer1 on
(a detector runs) telemetry and dets at ${WIRE_LIMITS.acceptedRateHz.min}-${WIRE_LIMITS.acceptedRateHz.max} Hz. Prints a table (or JSON) of the figures: rates, persons, die
temperature, thermal states; exits 7 when a cell failed. Real devices: lookout orchestrate --matrix
with soak-gate steps.

Options:
  --scenarios <list>         scenario names from configs/scenarios (people-crossing, thermal-soak…) or paths, comma-separated
  --layers <list>            layers or aliases, comma-separated
  --seconds <s>              watched per cell (default 60)
  --warmup-s <s>             after the device is ready, before watching (default 3)
  --rate-hz <min-max>        telemetry and dets rates accepted from layer1 (default the wire's 3-15)
  --mqtt <url>               the broker the devices and the watch use (default $LOOKOUT_MQTT_URL, else mqtt://127.0.0.1:1883)
  --json                     the cells as one JSON object`;

const EXAMPLES = [
  `lookout soak-matrix --scenarios people-crossing,thermal-soak --layers layer0,layer2,layer4 --seconds 120`,
  `lookout soak-matrix --scenarios vehicles --layers full --seconds 30 --json`,
];

export interface MatrixCell {
  scenario: string;
  layer: LayerId;
  passed: boolean;
  failures: string[];
  telemetry_hz: number;
  dets_hz: number | null;
  persons_max: number;
  die_temp_max_c: number | null;
  thermal_states: string[];
  seconds: number;
}

function list(text: string | undefined, flag: string): string[] {
  const items = (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new LookoutError('config_invalid', `${flag}: a comma-separated list`, { details: { usage: true } });
  return items;
}

/** A simulated device for one cell, resolved once it printed its ready line. */
async function startSimDevice(
  deviceId: string,
  layer: LayerId,
  scenario: string,
  mqtt: string,
  dataDir: string,
): Promise<{ child: ChildProcess; logs: () => string }> {
  const child = spawn(
    process.execPath,
    [
      join(packageRoot(), 'bin', 'lookout-edge.js'),
      '--device-id',
      deviceId,
      '--mqtt',
      mqtt,
      '--data-dir',
      dataDir,
      '--source',
      'sim',
      '--layer',
      layer,
      '--tool-port',
      '0',
      '--log-level',
      'warn',
    ],
    { env: { ...process.env, SIM_SCENARIO: scenario }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  await new Promise<void>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`no ready line within 30 s:\n${stderr.slice(-2000)}`)), 30_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('"event":"ready"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (code ${code}) before ready:\n${stderr.slice(-2000)}`));
    });
  });
  return { child, logs: () => stderr };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function formatMatrix(cells: MatrixCell[]): string {
  const head = ['scenario', 'layer', 'result', 'telemetry Hz', 'dets Hz', 'persons', 'die max C', 'thermal', 'why'];
  const rows = cells.map((c) => [
    c.scenario,
    c.layer,
    c.passed ? 'pass' : 'FAIL',
    c.telemetry_hz.toFixed(1),
    c.dets_hz === null ? '—' : c.dets_hz.toFixed(1),
    String(c.persons_max),
    c.die_temp_max_c === null ? '—' : c.die_temp_max_c.toFixed(1),
    c.thermal_states.join(',') || '—',
    c.failures.join('; '),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export const soakMatrixCommand = defineCommand({
  summary: 'scenarios × layers on simulated devices, each watched on the bus (rates, persons, thermal, plugin failures); a table of results',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: [...BASE_EXITS, EXIT.unreachable, EXIT.checkFailed],
  options: {
    scenarios: { type: 'string' },
    layers: { type: 'string' },
    seconds: { type: 'string', default: '60' },
    'warmup-s': { type: 'string', default: '3' },
    'rate-hz': { type: 'string', default: `${WIRE_LIMITS.acceptedRateHz.min}-${WIRE_LIMITS.acceptedRateHz.max}` },
    mqtt: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
  async run({ values }) {
    const scenarios = list(values.scenarios, '--scenarios');
    const layers = list(values.layers, '--layers').map((l) => resolveLayer(l));
    const seconds = Number(values.seconds);
    const warmup = Number(values['warmup-s']);
    if (!(seconds > 0 && seconds <= 24 * 3600) || !(warmup >= 0 && warmup <= 600)) {
      throw new LookoutError('config_invalid', '--seconds (up to a day) and --warmup-s (up to 600) are positive numbers of seconds', {
        details: { usage: true },
      });
    }
    const bounds = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(values['rate-hz']);
    if (!bounds || Number(bounds[1]) > Number(bounds[2])) {
      throw new LookoutError('config_invalid', `--rate-hz: <min>-<max>, e.g. 3-15, not "${values['rate-hz']}"`, { details: { usage: true } });
    }
    const [min, max] = [Number(bounds[1]), Number(bounds[2])];
    const mqtt = values.mqtt ?? process.env.LOOKOUT_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
    const bus = await MqttBus.connect({ url: mqtt, clientId: `lookout-matrix-${randomBytes(4).toString('hex')}`, clean: true, connectTimeoutMs: 10_000 });
    const cells: MatrixCell[] = [];
    const run = randomBytes(3).toString('hex');
    try {
      for (const scenario of scenarios) {
        for (const layer of layers) {
          const deviceId = `soak-${run}-${cells.length}`;
          const dataDir = await mkdtemp(join(tmpdir(), 'lookout-soak-matrix-'));
          // The whole life (its hello, with failed plugins, comes at connect), and the measured window for the rates.
          const whole = TapRecorder.inMemory();
          const recorder = TapRecorder.inMemory();
          let measuring = false;
          const unsubscribe = await bus.subscribe(`devices/${deviceId}/#`, (topic, payload, meta) => {
            whole.record(topic, payload, meta.retain);
            if (measuring) recorder.record(topic, payload, meta.retain);
          });
          let device: Awaited<ReturnType<typeof startSimDevice>> | undefined;
          const failures: string[] = [];
          let watched = 0;
          try {
            device = await startSimDevice(deviceId, layer, scenario, mqtt, dataDir);
            await sleep(warmup * 1000);
            measuring = true;
            const started = Date.now();
            await sleep(seconds * 1000);
            watched = (Date.now() - started) / 1000;
            measuring = false;
          } catch (err) {
            failures.push(`the device did not run: ${(err as Error).message.split('\n')[0]}`);
          } finally {
            await unsubscribe();
            if (device) await stop(device.child);
            await rm(dataDir, { recursive: true, force: true });
          }
          const summary = recorder.summary();
          const figures = whole.summary().devices[deviceId];
          const rate = (suffix: string) => (watched > 0 ? (summary.topics[`${deviceId} ${suffix}`]?.messages ?? 0) / watched : 0);
          const telemetryHz = rate('telemetry');
          // Detection starts at layer1 (layer0 is encode only).
          const detects = layer !== 'layer0';
          const detsHz = detects ? rate('dets') : null;
          if (figures?.failed_plugins.length) failures.push(`failed plugins: ${figures.failed_plugins.join(', ')}`);
          if (watched > 0) {
            // Without a detector (layer0) telemetry idles at the die-temp interval (1 Hz): it must be there, at no set rate.
            if (detects && (telemetryHz < min || telemetryHz > max)) failures.push(`telemetry at ${telemetryHz.toFixed(1)} Hz, outside ${min}-${max}`);
            if (!detects && telemetryHz === 0) failures.push('no telemetry');
            if (detsHz !== null && (detsHz < min || detsHz > max)) failures.push(`dets at ${detsHz.toFixed(1)} Hz, outside ${min}-${max}`);
          }
          const cell: MatrixCell = {
            scenario,
            layer,
            passed: failures.length === 0,
            failures,
            telemetry_hz: Number(telemetryHz.toFixed(2)),
            dets_hz: detsHz === null ? null : Number(detsHz.toFixed(2)),
            persons_max: figures?.persons_max ?? 0,
            die_temp_max_c: figures?.die_temp_max_c ?? null,
            thermal_states: figures?.thermal_states_seen ?? [],
            seconds: Number(watched.toFixed(1)),
          };
          cells.push(cell);
          if (!values.json) console.log(`${scenario} × ${layer}: ${cell.passed ? 'pass' : `FAIL (${failures.join('; ')})`}`);
        }
      }
    } finally {
      await bus.close();
    }
    const passed = cells.every((c) => c.passed);
    console.log(values.json ? JSON.stringify({ passed, cells }) : `\n${formatMatrix(cells)}`);
    return passed ? 0 : EXIT.checkFailed;
  },
});
