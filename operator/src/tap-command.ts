import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { MqttBus } from 'lookout/lib/mqtt';
import { DeviceIdSchema } from 'lookout/core/contracts';
import { LookoutError } from 'lookout/core';
import { EXIT } from './exit-codes.js';
import { BASE_EXITS, defineCommand } from './command-spec.js';
import { formatTapView, TapRecorder, type TapSummary } from './tap/tap-session.js';

const USAGE = 'lookout tap <device|all> [--mqtt <url>] [--out <file.jsonl>] [--duration-s N] [--json]';

const ABOUT = `The bus tap (spec 02's tap_shadow_session): every message of one device (devices/<id>/# and its
shadow/<id>/# mirror), or of the whole fleet with "all", written to a JSONL file (one line per
message: t, topic, retain, payload, or payload_base64 when it is not JSON). On a terminal a live view
shows the rate of each topic, the persons in view (class 0 at confidence 0.35 or more), the die
temperature and the thermal state. Ends after --duration-s, or on Ctrl-C; then the summary.

Options:
  <device|all>               a device id, or all
  --mqtt <url>               the broker (default $LOOKOUT_MQTT_URL, else mqtt://127.0.0.1:1883)
  --mqtt-username <name>     broker user (default $LOOKOUT_MQTT_USERNAME; password from $LOOKOUT_MQTT_PASSWORD only)
  --out <file>               the JSONL file (default taps/tap-<device>-<time>.jsonl); appended to
  --duration-s <s>           stop after this long (default: until Ctrl-C)
  --json                     no live view; the summary as one JSON object at the end`;

const EXAMPLES = [`lookout tap cam-1 --mqtt mqtt://10.0.0.2:1883`, `lookout tap all --duration-s 600 --out soak/bus.jsonl --json`];

export const tapCommand = defineCommand({
  summary: 'the bus of one device (or all) to JSONL with a live view: rates per topic, person counts, thermal',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: [...BASE_EXITS, EXIT.unreachable],
  options: {
    mqtt: { type: 'string' },
    'mqtt-username': { type: 'string' },
    out: { type: 'string' },
    'duration-s': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
  async run({ values, positionals }) {
    const [target] = positionals;
    if (!target || positionals.length > 1) throw new LookoutError('config_invalid', `tap takes one device id, or all: ${USAGE}`, { details: { usage: true } });
    if (target !== 'all' && !DeviceIdSchema.safeParse(target).success) {
      throw new LookoutError('config_invalid', `"${target}" is not a device id (one MQTT topic level)`, { details: { usage: true } });
    }
    let durationMs: number | undefined;
    if (values['duration-s'] !== undefined) {
      const s = Number(values['duration-s']);
      if (!Number.isFinite(s) || s <= 0)
        throw new LookoutError('config_invalid', `--duration-s: a positive number, not "${values['duration-s']}"`, { details: { usage: true } });
      durationMs = s * 1000;
    }
    const out = resolve(values.out ?? join('taps', `tap-${target}-${new Date().toISOString().replace(/[:.]/g, '')}.jsonl`));
    const url = values.mqtt ?? process.env.LOOKOUT_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
    const username = values['mqtt-username'] ?? process.env.LOOKOUT_MQTT_USERNAME;
    const password = process.env.LOOKOUT_MQTT_PASSWORD;
    const bus = await MqttBus.connect({
      url,
      clientId: `lookout-tap-${randomBytes(4).toString('hex')}`,
      clean: true,
      connectTimeoutMs: 10_000,
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
    });
    const recorder = await TapRecorder.open(out);
    const live = !values.json && process.stdout.isTTY;
    let summary: TapSummary;
    try {
      const device = target === 'all' ? '+' : target;
      for (const filter of [`devices/${device}/#`, `shadow/${device}/#`]) {
        await bus.subscribe(filter, (topic, payload, meta) => recorder.record(topic, payload, meta.retain));
      }
      await new Promise<void>((done) => {
        const stop = (): void => {
          clearInterval(view);
          clearTimeout(timer);
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          done();
        };
        const view = setInterval(() => {
          if (live) process.stdout.write(`\x1b[H\x1b[2J${formatTapView(recorder.summary())}\n`);
        }, 1000);
        const timer = durationMs === undefined ? undefined : setTimeout(stop, durationMs);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      summary = recorder.summary();
    } finally {
      await bus.close();
      await recorder.close();
    }
    console.log(values.json ? JSON.stringify(summary) : formatTapView(summary));
    return 0;
  },
});
