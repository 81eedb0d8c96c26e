/**
 * A hub for the device-ssh tests (not a test file itself): the hub's plugin set plus device-ssh and
 * a plugin that hands its DEVICE_SSH service to the test, a registry file of the given devices, and
 * every log line and ring event kept so tests can look for secrets in them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { definePlugin } from '../../../../../core/src/index.js';
import { createLogger } from '../../../../../core/src/log/logger.js';
import deviceSshPlugin from '../../../../../hub/plugins/device-ssh/src/index.js';
import { DEVICE_SSH, type DeviceSsh } from '../../../../../hub/plugins/device-ssh/src/service.js';
import { loadHubPluginSet } from '../../../../../hub/src/hub-plugin-set.js';
import type { HubOptions } from '../../../../../hub/src/hub-options.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { api, testHub } from '../../../../support/hub-helpers.js';

export interface SshTestHub {
  hub: RunningHub;
  ssh: DeviceSsh;
  /** Every log line so far (debug level). */
  logs(): string;
  /** GET /debug/events as text. */
  ring(): Promise<string>;
  close(): Promise<void>;
}

export async function sshTestHub(options: {
  dir: string;
  devices: Record<string, unknown>[];
  env: Record<string, string | undefined>;
  /** A bus of the test's (to publish hellos); default the hub's embedded one. */
  bus?: HubOptions['bus'];
  deviceNetworks?: string[];
}): Promise<SshTestHub> {
  mkdirSync(options.dir, { recursive: true });
  const registryFile = join(options.dir, `registry-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(registryFile, JSON.stringify({ devices: options.devices }));
  let ssh: DeviceSsh | undefined;
  const capture = definePlugin({
    name: 'test-ssh-capture',
    version: '1.0.0',
    core: '^1',
    description: 'hands DEVICE_SSH to the test',
    requires: [DEVICE_SSH],
    start(ctx) {
      ssh = ctx.services.get(DEVICE_SSH);
    },
  });
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const set = await loadHubPluginSet();
  const hub = await testHub({
    dataDir: options.dir,
    registryFile,
    plugins: [...set.plugins.filter((p) => p.name !== 'device-ssh'), deviceSshPlugin, capture],
    essential: [...set.essential, 'device-ssh'],
    env: options.env,
    logger: createLogger({ level: 'debug', destination }),
    ...(options.bus ? { bus: options.bus } : {}),
    ...(options.deviceNetworks ? { deviceNetworks: options.deviceNetworks } : {}),
  });
  if (!ssh) throw new Error('device-ssh did not provide DEVICE_SSH');
  return {
    hub,
    ssh,
    logs: () => lines.join(''),
    ring: async () => (await api(hub.url, '/debug/events?limit=1000')).text,
    close: () => hub.close(),
  };
}
