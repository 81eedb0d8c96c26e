import { readFile } from 'node:fs/promises';
import { LookoutError, parseEnv, resolveLayer, DEVICE_PATHS, type LayerId } from 'lookout/core';
import {
  firstPartyPlugins,
  applyLayer,
  layerEnvPath,
  isLayerEnabled,
  LAYER_KEY,
  LAYERS,
  unknownEnvKeys,
  declaredKeys,
  parsePluginConfig,
} from 'lookout/core/host';
import { EXIT } from './exit-codes.js';
import { defineCommand, SSH_EXITS } from './command-spec.js';
import { waitSeconds, watchHello, type HelloWatch } from './remote/hello-wait.js';
import { envDiff, formatEnvDiff } from './remote/env-diff.js';

const USAGE = 'lookout apply-layer <layer> <device> [--dry-run] [--restart] [--root <dir>] [--json]   (local: lookout apply-layer <layer> --data-dir <dir>)';
export const DEFAULT_SERVICE_COMMAND = 'systemctl restart lookout-edge';

const ABOUT = `Applies a configuration layer to a device (spec 02's apply script). The layer's env is checked
first against the keys the plugins declare (a bad value refuses, an undeclared key warns); then the
writable mirror (/app-storage/config/edge_v3_layer.env) and the durable file
(/data/config/edge_v3_layer.env) are written over SFTP, each atomically (temp file, then rename).
With --restart (or APPLY_RESTART=1) the runtime is restarted by the service command and the
command waits until the device's hello reports the new layer.
Without <device>, the stack is written under a local data root (--data-dir), as before.

Options:
  <layer>                    layer0…layer5 or an alias (layer2_tracker, full…; see lookout layers)
  --layer-env <file>         apply this env file (it names its layer in EDGE_V3_LAYER) instead of the shipped one
  --dry-run                  show the diff against the device's durable file; write nothing
  --restart                  restart the runtime and wait for its hello with the layer (also APPLY_RESTART=1)
  --service-command <cmd>    how the device restarts the runtime (default "${DEFAULT_SERVICE_COMMAND}")
  --data-dir <dir>           local mode: the data root to write under
  --json                     the result as one JSON object`;

const EXAMPLES = [
  `DEVICE_PASSWORD=… lookout apply-layer layer3 cam-1 --registry hub/registry.json --dry-run`,
  `DEVICE_PASSWORD=… APPLY_RESTART=1 lookout apply-layer layer2_tracker 10.0.0.21 --device-id cam-1 --mqtt mqtt://10.0.0.2:1883`,
  `lookout apply-layer layer4_thermal --data-dir ./dev-device`,
];

interface CheckedLayer {
  layer: LayerId;
  text: string;
  env: Record<string, string>;
  warnings: string[];
}

/** The layer's env, checked against every first-party device plugin's declared keys and values. */
export async function checkLayer(alias: string, envFile?: string): Promise<CheckedLayer> {
  let layer = resolveLayer(alias);
  const source = envFile ?? layerEnvPath(layer);
  const text = await readFile(source, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new LookoutError('config_invalid', `${source} cannot be read: ${err.code ?? err.message}`, { details: { usage: true, file: source } });
  });
  const env = parseEnv(text, source);
  if (envFile) {
    const named = env[LAYER_KEY];
    if (!named || resolveLayer(named) !== layer) {
      throw new LookoutError('config_invalid', `${source} names ${LAYER_KEY}=${named ?? '(unset)'}, not ${LAYERS[layer].canonical}`, {
        details: { file: source },
      });
    }
    layer = resolveLayer(named);
  }
  // Device plugins (hub plugins have no layer); the values are checked for those the layer runs, as the device will.
  const plugins = (await firstPartyPlugins()).filter((p) => p.layer !== undefined);
  for (const p of plugins.filter((x) => isLayerEnabled(x.layer, layer))) parsePluginConfig(p.name, p.config, env, source);
  const warnings = unknownEnvKeys(env, declaredKeys(plugins.map((p) => p.config)), [LAYER_KEY]).map(
    ({ key, hint }) => `${key} in ${source} is declared by no plugin${hint ? `; did you mean ${hint}?` : ''}`,
  );
  return { layer, text, env, warnings };
}

export const applyLayerCommand = defineCommand({
  summary: 'apply a layer to a device over SSH (checked, mirror then durable file, atomically; --restart waits for the hello) or to a local data root',
  usage: USAGE,
  about: ABOUT,
  examples: EXAMPLES,
  exits: [...SSH_EXITS, EXIT.checkFailed],
  ssh: true,
  bus: true,
  options: {
    'data-dir': { type: 'string' },
    'layer-env': { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    restart: { type: 'boolean', default: false },
    'service-command': { type: 'string', default: DEFAULT_SERVICE_COMMAND },
  },
  async run({ values, positionals, connect }) {
    const [alias, device] = positionals;
    if (!alias) throw new LookoutError('config_invalid', 'apply-layer needs a layer, e.g. `lookout apply-layer layer2`', { details: { usage: true } });
    if (!device) {
      // The local mode of earlier versions: a data root on this machine.
      const result = await applyLayer(values['data-dir'] ?? '/', alias);
      console.log(JSON.stringify(result));
      return 0;
    }
    if (values['data-dir'] !== undefined)
      throw new LookoutError('config_invalid', '--data-dir is for a local data root; a device takes --root', { details: { usage: true } });
    const restart = values.restart || process.env.APPLY_RESTART === '1';
    const checked = await checkLayer(alias, values['layer-env']);
    for (const w of checked.warnings) console.error(`warning: ${w}`);
    const waitMs = restart ? waitSeconds(values) * 1000 : 0;

    const session = await connect(device);
    let watch: HelloWatch | undefined;
    try {
      const mirror = session.path(DEVICE_PATHS.mirrorLayerEnv);
      const durable = session.path(DEVICE_PATHS.durableLayerEnv);
      const before = await session.readText(durable);
      const diff = envDiff(before === undefined ? {} : parseEnv(before, durable), checked.env);
      if (values['dry-run']) {
        if (values.json)
          console.log(JSON.stringify({ device: session.deviceId, layer: checked.layer, dry_run: true, durable, diff, warnings: checked.warnings }));
        else console.log(`${session.deviceId}: ${durable} (dry run: nothing written)\n${formatEnvDiff(diff)}`);
        return 0;
      }
      if (restart) watch = await watchHello(session.deviceId, values);
      await session.writeFileAtomic(mirror, checked.text);
      await session.writeFileAtomic(durable, checked.text);
      let hello: { layer: string; timestamp: string } | undefined;
      if (restart && watch) {
        const since = Date.now();
        await session.run(values['service-command'], `restarting the runtime (${values['service-command']})`);
        const h = await watch.next(since, (m) => m.layer === checked.layer, waitMs, `layer ${checked.layer}`);
        hello = { layer: h.layer, timestamp: h.timestamp };
      }
      const result = { device: session.deviceId, layer: checked.layer, mirror, durable, diff, restarted: restart, ...(hello ? { hello } : {}) };
      if (values.json) console.log(JSON.stringify(result));
      else {
        console.log(`${session.deviceId}: ${checked.layer} written to ${mirror} and ${durable}`);
        console.log(formatEnvDiff(diff));
        if (hello) console.log(`${session.deviceId} is back with layer ${hello.layer} (hello at ${hello.timestamp})`);
      }
      return 0;
    } finally {
      await watch?.close();
      session.close();
    }
  },
});
