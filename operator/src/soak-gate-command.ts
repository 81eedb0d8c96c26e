import { setTimeout as sleep } from 'node:timers/promises';
import { LookoutError, parseEnv, DEVICE_PATHS } from 'lookout/core';
import { EXIT } from './exit-codes.js';
import { defineCommand, SSH_EXITS } from './command-spec.js';
import type { DeviceSession } from './remote/device-session.js';
import { BusTemperature } from './remote/bus-temperature.js';

const USAGE = 'lookout soak-gate <device> <minutes> [--interval-s 10] [--warn-c <C>] [--min-rate 0.9] [--root <dir>] [--json]';
const ZONE = '/sys/class/thermal/thermal_zone0/temp';
/** Where the gate leaves its pass marker on the device. */
export const PASS_MARKER = '/data/config/soak_gate_pass.json';

const ABOUT = `The soak gate (spec 02's soak_gate script): for <minutes>, polls the die temperature (the thermal
zone the die-temp plugin reads, millidegrees) and the encoder's frame counter (encode.frames in the
recorder's .h265_status) over SSH. It passes when every temperature stays below THERMAL_WARN and the
encoder grew at least --min-rate of its fps over the window without stalling; then it writes a pass
marker (time, layer, figures) to ${PASS_MARKER} on the device. On failure it says why and exits 7.

Options:
  <minutes>                  the window (fractions allowed: 0.5 is 30 s)
  --interval-s <s>           seconds between polls (default 10)
  --warn-c <C>               the THERMAL_WARN threshold (default THERMAL_WARN_C of the device's layer env, else 75)
  --min-rate <r>             the least share of the encoder's fps the frame counter must grow by (default 0.9)
  --stall-s <s>              the longest time the frame counter may stand still (default 30)
  --temp-file <path>         the thermal zone on the device (default ${ZONE})
  --temp-source zone|bus     zone: that file over SSH (default); bus: the die temperature the device reports in
                             its telemetry and status (a simulated die, a zone the gate cannot read)
  --mqtt <url>               the broker for --temp-source bus (default $LOOKOUT_MQTT_URL)
  --recordings-dir <path>    where .h265_status lives on the device (default /data/recordings)
  --json                     the verdict and figures as one JSON object`;

const EXAMPLES = [
  `DEVICE_PASSWORD=… lookout soak-gate cam-1 30 --registry hub/registry.json`,
  `lookout soak-gate root@10.0.0.21 10 --interval-s 5 --warn-c 70 --json`,
];

interface Sample {
  at: number;
  celsius: number;
  frames: number;
  fps: number;
}

function numberFlag(text: string, flag: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new LookoutError('config_invalid', `${flag}: a number from ${min} to ${max}, not "${text}"`, { details: { usage: true } });
  return n;
}

/** Where the die temperature comes from: the thermal zone file over SSH, or a reading taken elsewhere (the bus). */
export type TemperatureSource = { file: string } | { read: () => number };

export async function sampleDevice(session: DeviceSession, temperature: TemperatureSource, statusFile: string): Promise<Sample> {
  const [tempText, statusText] = await Promise.all([
    'file' in temperature ? session.readText(temperature.file) : Promise.resolve(''),
    session.readText(statusFile),
  ]);
  const where = 'file' in temperature ? temperature.file : 'the bus';
  if (tempText === undefined) throw new LookoutError('soak_gate_failed', `${session.where}: no die temperature at ${where}`, { details: { file: where } });
  if (statusText === undefined)
    throw new LookoutError('soak_gate_failed', `${session.where}: no ${statusFile}: the recorder is not running`, { details: { file: statusFile } });
  const milli = 'file' in temperature ? Number(tempText.trim()) : temperature.read() * 1000;
  let encode: { frames?: unknown; fps?: unknown } | undefined;
  try {
    encode = (JSON.parse(statusText) as { encode?: { frames?: unknown; fps?: unknown } }).encode;
  } catch {
    // Rewritten as it was read is not possible (atomic writes): a malformed file is a failure below.
  }
  if (!Number.isFinite(milli) || typeof encode?.frames !== 'number' || typeof encode.fps !== 'number') {
    throw new LookoutError(
      'soak_gate_failed',
      `${session.where}: ${Number.isFinite(milli) ? statusFile : where} cannot be read as a temperature or encoder status`,
    );
  }
  return { at: Date.now(), celsius: milli / 1000, frames: encode.frames, fps: encode.fps };
}

export const soakGateCommand = defineCommand({
  summary: 'soak gate: die temperature below THERMAL_WARN and encoder growth at its rate for N minutes over SSH; a pass marker on the device',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: [...SSH_EXITS, EXIT.checkFailed],
  ssh: true,
  options: {
    'interval-s': { type: 'string', default: '10' },
    'warn-c': { type: 'string' },
    'min-rate': { type: 'string', default: '0.9' },
    'stall-s': { type: 'string', default: '30' },
    'temp-file': { type: 'string', default: ZONE },
    'temp-source': { type: 'string', default: 'zone' },
    mqtt: { type: 'string' },
    'recordings-dir': { type: 'string', default: '/data/recordings' },
  },
  async run({ values, positionals, connect }) {
    const [device, minutesText] = positionals;
    if (!device || minutesText === undefined)
      throw new LookoutError('config_invalid', `soak-gate needs a device and minutes: ${USAGE}`, { details: { usage: true } });
    const windowMs = numberFlag(minutesText, '<minutes>', 0.01, 24 * 60) * 60_000;
    const intervalMs = numberFlag(values['interval-s'], '--interval-s', 0.2, 3600) * 1000;
    const minRate = numberFlag(values['min-rate'], '--min-rate', 0, 10);
    const stallMs = numberFlag(values['stall-s'], '--stall-s', 1, 3600) * 1000;

    if (values['temp-source'] !== 'zone' && values['temp-source'] !== 'bus') {
      throw new LookoutError('config_invalid', `--temp-source: zone or bus, not "${values['temp-source']}"`, { details: { usage: true } });
    }
    const busUrl = values.mqtt ?? process.env.LOOKOUT_MQTT_URL;
    if (values['temp-source'] === 'bus' && !busUrl) {
      throw new LookoutError('config_invalid', '--temp-source bus needs the broker: --mqtt <url> (or LOOKOUT_MQTT_URL)', { details: { usage: true } });
    }
    const session = await connect(device);
    const busTemperature =
      values['temp-source'] === 'bus'
        ? await BusTemperature.open(session.deviceId, busUrl!).catch((err: unknown) => {
            session.close();
            throw err;
          })
        : undefined;
    try {
      const durable = await session.readText(session.path(DEVICE_PATHS.durableLayerEnv));
      const layerEnv = durable ? parseEnv(durable, DEVICE_PATHS.durableLayerEnv) : {};
      const warnC = numberFlag(values['warn-c'] ?? layerEnv.THERMAL_WARN_C ?? '75', '--warn-c', -40, 200);
      const layer = layerEnv.EDGE_V3_LAYER ?? null;
      const temperature: TemperatureSource = busTemperature
        ? { read: () => busTemperature.read(Math.max(10_000, 3 * intervalMs)) }
        : { file: session.path(values['temp-file']) };
      // The first bus reading may take a moment after the subscription.
      if (busTemperature) await waitForReading(() => busTemperature.read(10_000), 10_000);
      const statusFile = `${session.path(values['recordings-dir'])}/.h265_status`;

      const samples: Sample[] = [];
      const failures: string[] = [];
      const started = Date.now();
      let lastGrowthAt = started;
      for (;;) {
        const s = await sampleDevice(session, temperature, statusFile);
        const prev = samples.at(-1);
        samples.push(s);
        if (s.celsius >= warnC) failures.push(`die temperature ${s.celsius.toFixed(1)} C at ${new Date(s.at).toISOString()} reached THERMAL_WARN (${warnC} C)`);
        if (prev && s.frames < prev.frames) failures.push(`the encoder's frame counter went back from ${prev.frames} to ${s.frames} (the encoder restarted)`);
        if (prev && s.frames > prev.frames) lastGrowthAt = s.at;
        if (s.at - lastGrowthAt > stallMs)
          failures.push(`the encoder's frame counter stood still at ${s.frames} for ${Math.round((s.at - lastGrowthAt) / 1000)} s`);
        if (failures.length > 0 || s.at - started >= windowMs) break;
        if (!values.json)
          process.stdout.write(
            `\r${session.deviceId}: ${Math.round((s.at - started) / 1000)}/${Math.round(windowMs / 1000)} s, ${s.celsius.toFixed(1)} C, ${s.frames} frames   `,
          );
        await sleep(Math.min(intervalMs, Math.max(0, started + windowMs - Date.now())));
      }
      if (!values.json) process.stdout.write('\n');
      const first = samples[0];
      const last = samples.at(-1)!;
      const seconds = (last.at - first.at) / 1000;
      const grown = last.frames - first.frames;
      const expected = last.fps * seconds * minRate;
      if (failures.length === 0 && grown < expected) {
        failures.push(`the encoder grew by ${grown} frames in ${seconds.toFixed(1)} s, below ${minRate} × ${last.fps} fps (${Math.ceil(expected)} frames)`);
      }
      const figures = {
        seconds: Number(seconds.toFixed(1)),
        samples: samples.length,
        max_celsius: Math.max(...samples.map((x) => x.celsius)),
        warn_celsius: warnC,
        frames_grown: grown,
        frames_per_second: seconds > 0 ? Number((grown / seconds).toFixed(2)) : 0,
        encoder_fps: last.fps,
        min_rate: minRate,
      };
      const passed = failures.length === 0;
      if (passed) {
        await session.writeFileAtomic(
          session.path(PASS_MARKER),
          `${JSON.stringify({ passed_at: new Date().toISOString(), device_id: session.deviceId, layer, minutes: windowMs / 60_000, ...figures }, null, 2)}\n`,
        );
      }
      if (values.json) console.log(JSON.stringify({ device: session.deviceId, layer, passed, failures, ...figures }));
      else
        console.log(
          passed
            ? `${session.deviceId}: soak gate passed (${JSON.stringify(figures)}); marker ${session.path(PASS_MARKER)}`
            : `${session.deviceId}: soak gate FAILED`,
        );
      if (!passed) throw new LookoutError('soak_gate_failed', `${session.deviceId}: ${failures.join('; ')}`, { details: { failures, ...figures } });
      return 0;
    } finally {
      await busTemperature?.close();
      session.close();
    }
  },
});

async function waitForReading(read: () => number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      read();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}
