import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MqttBus } from 'lookout/lib/mqtt';
import { WIRE_LIMITS } from 'lookout/core/contracts';
import { LookoutError, parseEnv, DEVICE_PATHS } from 'lookout/core';
import { storageHealth } from 'lookout/lib/storage';
import { EXIT } from './exit-codes.js';
import { defineCommand, SSH_EXITS } from './command-spec.js';
import { sampleDevice } from './soak-gate-command.js';
import { TapRecorder } from './tap/tap-session.js';
import { snapshotOverSsh } from './visual/device-snapshot.js';

const USAGE = 'lookout soak <device> --minutes N [--tap] [--visual] [--interval-s 10] [--out <dir>] [--mqtt <url>] [--json]';

const ABOUT = `A watched soak of one device (spec 02's automate_shadow_soak): for N minutes, every --interval-s,
the watchers sample
  rates      telemetry and dets per second on the bus (3-15 Hz once a detector runs), failed plugins in its hello
  thermal    the die temperature (its thermal zone over SSH) against THERMAL_WARN, the thermal state on the bus
  storage    free space of the recordings volume over SSH against STORAGE_WARN_PCT / STORAGE_CRITICAL_PCT
  recorder   the .h265_status frame counter (no stall longer than --stall-s), is_writing, last_error
and with --visual a snapshot every minute (the newest chunk's last picture). Everything goes to
<out>/samples.jsonl (and with --tap the bus to <out>/bus.jsonl, snapshots to <out>/snapshots/);
the verdict and its reasons at the end; exit 7 when a watcher saw a failure.

Options:
  --minutes <n>              the soak's length (fractions allowed)
  --interval-s <s>           seconds between samples (default 10)
  --tap                      record the device's bus to <out>/bus.jsonl
  --visual                   a snapshot every minute to <out>/snapshots/
  --out <dir>                where the records go (default soaks/<device>-<time>)
  --mqtt <url>               the broker (default $LOOKOUT_MQTT_URL; user $LOOKOUT_MQTT_USERNAME, password $LOOKOUT_MQTT_PASSWORD)
  --mqtt-username <name>     broker user (default $LOOKOUT_MQTT_USERNAME; password from $LOOKOUT_MQTT_PASSWORD only)
  --stall-s <s>              the longest the encoder may stand still (default 30)
  --rate-hz <min-max>        the dets rate accepted once a detector runs (default the wire's 3-15)
  --temp-file, --recordings-dir as for soak-gate
  --json                     the verdict as one JSON object`;

const EXAMPLES = [
  `DEVICE_PASSWORD=… lookout soak cam-1 --minutes 60 --tap --visual --registry hub/registry.json --mqtt mqtt://10.0.0.2:1883`,
  `lookout soak root@10.0.0.21 --device-id cam-2 --minutes 5 --interval-s 5 --json`,
];

export const soakCommand = defineCommand({
  summary: 'a watched soak of a device: rates, thermal, storage and recorder watchers over SSH and the bus, --tap, --visual snapshots each minute',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: [...SSH_EXITS, EXIT.checkFailed],
  ssh: true,
  options: {
    minutes: { type: 'string' },
    'interval-s': { type: 'string', default: '10' },
    tap: { type: 'boolean', default: false },
    visual: { type: 'boolean', default: false },
    out: { type: 'string' },
    mqtt: { type: 'string' },
    'mqtt-username': { type: 'string' },
    'stall-s': { type: 'string', default: '30' },
    'rate-hz': { type: 'string', default: `${WIRE_LIMITS.acceptedRateHz.min}-${WIRE_LIMITS.acceptedRateHz.max}` },
    'temp-file': { type: 'string', default: '/sys/class/thermal/thermal_zone0/temp' },
    'recordings-dir': { type: 'string', default: '/data/recordings' },
  },
  async run({ values, positionals, connect }) {
    const [device] = positionals;
    const minutes = Number(values.minutes);
    const intervalMs = Number(values['interval-s']) * 1000;
    const stallMs = Number(values['stall-s']) * 1000;
    if (!device || positionals.length > 1 || !(minutes > 0 && minutes <= 7 * 24 * 60) || !(intervalMs >= 200) || !(stallMs >= 1000)) {
      throw new LookoutError('config_invalid', `soak needs a device and --minutes (and positive --interval-s, --stall-s): ${USAGE}`, {
        details: { usage: true },
      });
    }
    const mqtt = values.mqtt ?? process.env.LOOKOUT_MQTT_URL;
    if (!mqtt) throw new LookoutError('config_invalid', 'the rates watcher needs the broker: --mqtt <url> (or LOOKOUT_MQTT_URL)', { details: { usage: true } });

    const session = await connect(device);
    const out = resolve(values.out ?? join('soaks', `${session.deviceId}-${new Date().toISOString().replace(/[:.]/g, '')}`));
    await mkdir(join(out, 'snapshots'), { recursive: true });
    const username = values['mqtt-username'] ?? process.env.LOOKOUT_MQTT_USERNAME;
    const password = process.env.LOOKOUT_MQTT_PASSWORD;
    let bus: MqttBus | undefined;
    const tap = values.tap ? await TapRecorder.open(join(out, 'bus.jsonl')) : TapRecorder.inMemory();
    const failures: string[] = [];
    const fail = (why: string): void => {
      if (!failures.includes(why)) failures.push(why);
    };
    try {
      bus = await MqttBus.connect({
        url: mqtt,
        clientId: `lookout-soak-${randomBytes(4).toString('hex')}`,
        clean: true,
        connectTimeoutMs: 10_000,
        ...(username ? { username } : {}),
        ...(password ? { password } : {}),
      });
      let window = { telemetry: 0, dets: 0 };
      await bus.subscribe(`devices/${session.deviceId}/#`, (topic, payload, meta) => {
        tap.record(topic, payload, meta.retain);
        if (meta.retain) return;
        if (topic.endsWith('/telemetry')) window.telemetry++;
        else if (topic.endsWith('/dets')) window.dets++;
      });
      const durable = await session.readText(session.path(DEVICE_PATHS.durableLayerEnv));
      const env = durable ? parseEnv(durable, DEVICE_PATHS.durableLayerEnv) : {};
      const warnC = Number(env.THERMAL_WARN_C ?? 75);
      const thresholds = { warnPct: Number(env.STORAGE_WARN_PCT ?? 80), criticalPct: Number(env.STORAGE_CRITICAL_PCT ?? 95) };
      const recordings = session.path(values['recordings-dir']);
      const tempFile = session.path(values['temp-file']);
      const bounds = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(values['rate-hz']);
      if (!bounds || Number(bounds[1]) > Number(bounds[2])) {
        throw new LookoutError('config_invalid', `--rate-hz: <min>-<max>, e.g. 3-15, not "${values['rate-hz']}"`, { details: { usage: true } });
      }
      const [min, max] = [Number(bounds[1]), Number(bounds[2])];

      const started = Date.now();
      let windowStart = started;
      let lastFrames = -1;
      let lastGrowth = started;
      let lastSnapshot = 0;
      let samples = 0;
      let maxC = -Infinity;
      for (;;) {
        // The last window runs to the end of the soak: a fragment of a window would judge the rates of a moment.
        const remaining = Math.max(0, started + minutes * 60_000 - Date.now());
        await sleep(remaining < 1.5 * intervalMs ? remaining : intervalMs);
        const now = Date.now();
        const seconds = (now - windowStart) / 1000;
        const rates = { telemetry_hz: window.telemetry / seconds, dets_hz: window.dets / seconds };
        window = { telemetry: 0, dets: 0 };
        windowStart = now;
        const figures = tap.summary().devices[session.deviceId];
        const sample = await sampleDevice(session, { file: tempFile }, `${recordings}/.h265_status`).catch((err: Error) => {
          fail(err.message);
          return undefined;
        });
        const free = await session.freeSpace(recordings).catch(() => undefined);
        const usedPct = free && free.totalBytes > 0 ? 100 * (1 - free.availableBytes / free.totalBytes) : null;
        const storage = usedPct === null ? null : storageHealth(usedPct, thresholds);
        let snapshot: string | null = null;
        if (values.visual && now - lastSnapshot >= 60_000) {
          lastSnapshot = now;
          try {
            const shot = await snapshotOverSsh(session, recordings, 640);
            snapshot = join(out, 'snapshots', `${new Date(now).toISOString().replace(/[:.]/g, '')}.jpg`);
            await writeFile(snapshot, shot.jpeg);
          } catch (err) {
            fail(`no snapshot: ${(err as Error).message}`);
          }
        }
        // The watchers' verdicts on this sample.
        const detecting = figures?.layer !== undefined && figures.layer !== null && figures.layer !== 'layer0';
        // A window cut short (sampling overran the end of the soak) says nothing about rates: none is judged under 1 s.
        const judged = seconds >= 1;
        if (judged && detecting && (rates.dets_hz < min || rates.dets_hz > max))
          fail(`dets at ${rates.dets_hz.toFixed(1)} Hz at +${Math.round((now - started) / 1000)} s, outside ${min}-${max}`);
        if (judged && rates.telemetry_hz === 0) fail(`no telemetry for ${seconds.toFixed(0)} s at +${Math.round((now - started) / 1000)} s`);
        if (figures?.failed_plugins.length) fail(`failed plugins: ${figures.failed_plugins.join(', ')}`);
        if (sample) {
          maxC = Math.max(maxC, sample.celsius);
          if (sample.celsius >= warnC) fail(`die temperature ${sample.celsius.toFixed(1)} C reached THERMAL_WARN (${warnC} C)`);
          if (sample.frames > lastFrames) lastGrowth = now;
          else if (now - lastGrowth > stallMs) fail(`the encoder stood still at ${sample.frames} frames for ${Math.round((now - lastGrowth) / 1000)} s`);
          lastFrames = sample.frames;
        }
        if (storage === 'CRITICAL') fail(`recordings storage CRITICAL (${usedPct?.toFixed(1)}% used)`);
        const line = {
          t: new Date(now).toISOString(),
          ...(judged ? rates : { telemetry_hz: null, dets_hz: null }),
          persons: figures?.persons ?? null,
          thermal_state: figures?.thermal_state ?? null,
          die_temp_c: sample?.celsius ?? null,
          frames: sample?.frames ?? null,
          storage,
          used_pct: usedPct === null ? null : Number(usedPct.toFixed(1)),
          snapshot,
        };
        await appendFile(join(out, 'samples.jsonl'), `${JSON.stringify(line)}\n`);
        samples++;
        if (!values.json) {
          console.log(
            `+${Math.round((now - started) / 1000)} s: telemetry ${rates.telemetry_hz.toFixed(1)} Hz, dets ${rates.dets_hz.toFixed(1)} Hz, persons ${line.persons ?? '—'}, die ${line.die_temp_c ?? '—'} C, frames ${line.frames ?? '—'}, storage ${storage ?? '—'}`,
          );
        }
        // What is left after sampling, when under half an interval, is no window of its own.
        if (started + minutes * 60_000 - Date.now() < intervalMs / 2) break;
      }
      const passed = failures.length === 0;
      const verdict = {
        device: session.deviceId,
        passed,
        failures,
        samples,
        max_celsius: Number.isFinite(maxC) ? maxC : null,
        out,
        bus: values.tap ? join(out, 'bus.jsonl') : null,
      };
      await writeFile(join(out, 'verdict.json'), `${JSON.stringify(verdict, null, 2)}\n`);
      console.log(values.json ? JSON.stringify(verdict) : `${session.deviceId}: soak ${passed ? 'passed' : 'FAILED'}; records in ${out}`);
      if (!passed) throw new LookoutError('soak_gate_failed', `${session.deviceId}: ${failures.join('; ')}`, { details: verdict });
      return 0;
    } finally {
      await bus?.close();
      await tap.close();
      session.close();
    }
  },
});
