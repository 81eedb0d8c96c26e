import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MqttBus } from '../../lib/mqtt/mqtt-bus.js';
import { importPlugin } from '../../core/src/images/load-image.js';
import { createLogger } from '../../core/src/log/logger.js';
import { loadPlugins, type LoadedRuntime } from '../../core/src/plugin/loader.js';
import type { LayerId } from '../../core/src/plugin/manifest.js';
import { packageRoot } from '../../core/src/paths/package-root.js';

export interface PluginDevice {
  id: string;
  bus: MqttBus;
  runtime: LoadedRuntime;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * A device made of real first-party plugins loaded in this process on a real broker, for tests of
 * one plugin family without the whole `lookout-edge` process around it.
 */
export async function startPluginDevice(options: {
  brokerUrl: string;
  plugins: string[];
  layer: LayerId;
  env?: Record<string, string>;
  id?: string;
  role?: string;
  /** Runs before the plugins start, e.g. to put a model package under `<dataDir>/data/models`. */
  prepare?: (dataDir: string) => Promise<void>;
}): Promise<PluginDevice> {
  const id = options.id ?? `cam-${randomBytes(3).toString('hex')}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'lookout-dev-'));
  await options.prepare?.(dataDir);
  const bus = await MqttBus.connect({ url: options.brokerUrl, clientId: id, clean: true, connectTimeoutMs: 5000 });
  const plugins = await Promise.all(options.plugins.map((name) => importPlugin(name, packageRoot())));
  try {
    const runtime = await loadPlugins({
      plugins,
      runtime: { kind: 'device', id, dataDir, layer: options.layer, role: options.role ?? 'front_door', device: { source: 'sim' } },
      bus,
      env: options.env ?? {},
      logger: createLogger({ level: 'silent' }),
    });
    return {
      id,
      bus,
      runtime,
      dataDir,
      async stop() {
        await runtime.stop();
        await bus.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await bus.close();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}
