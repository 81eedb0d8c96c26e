import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { terminate } from './server-process.js';

/**
 * A `lookout-hub` replica as a real process (bin/lookout-hub.js) on an external broker and Redis,
 * for the replica tests: it is ready when it prints its JSON ready line; its stderr (warnings and
 * errors) is kept for failure messages.
 */
export interface HubReplica {
  name: string;
  url: string;
  child: ChildProcess;
  dataDir: string;
  /** The last 200 stderr chunks. */
  stderr: string[];
}

export interface HubReplicaOptions {
  name: string;
  /** mqtt://… of the external broker. */
  brokerUrl: string;
  /** redis://… of the shared state. */
  stateUrl: string;
  statePrefix: string;
  mqttGroup: string;
  dataDir: string;
  /** A plugin set file (see writeReplicaPluginSet). */
  pluginSet: string;
  fleetSecret: string;
  /** The HTTP port; default 0 (a free one). A replica restarted behind a load balancer keeps its port. */
  port?: number;
  /** More lookout-hub flags (e.g. --stale-sec 60). */
  extraArgs?: string[];
}

/**
 * The hub's core plugins that read state, as a plugin set file in `dir`; ones that reach out to
 * devices' tool servers are left out (the replica tests' devices are simulated on the bus).
 */
export function writeReplicaPluginSet(dir: string, name: string, extraPlugins: string[] = []): string {
  const file = join(dir, 'plugins.json');
  writeFileSync(
    file,
    JSON.stringify({ name, plugins: ['hub-meta', 'debug-ring', 'bus-cache', 'registry', 'fleet-health', ...extraPlugins], essential: ['bus-cache'] }),
  );
  return file;
}

export async function startHubReplica(options: HubReplicaOptions): Promise<HubReplica> {
  const { name } = options;
  const child = spawn(
    process.execPath,
    [
      join(packageRoot(), 'bin', 'lookout-hub.js'),
      '--port',
      String(options.port ?? 0),
      '--mqtt',
      options.brokerUrl,
      '--state',
      options.stateUrl,
      '--state-prefix',
      options.statePrefix,
      '--mqtt-group',
      options.mqttGroup,
      '--data-dir',
      options.dataDir,
      '--plugin-set',
      options.pluginSet,
      ...(options.extraArgs ?? []),
      '--json',
      '--log-level',
      'warn',
    ],
    { env: { ...process.env, LOOKOUT_FLEET_SECRET: options.fleetSecret }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const stderr: string[] = [];
  child.stderr?.on('data', (c: Buffer) => {
    stderr.push(c.toString());
    if (stderr.length > 200) stderr.shift();
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`replica ${name} exited (${code}) before it was ready:\n${stderr.join('')}`)));
  });
  const ready = JSON.parse(line) as { url: string };
  return { name, url: ready.url, child, dataDir: options.dataDir, stderr };
}

/** Whether the replica's process still runs. */
export function replicaAlive(replica: HubReplica): boolean {
  return replica.child.exitCode === null && replica.child.signalCode === null;
}

/**
 * SIGTERM to every replica still running, then waits until each has exited. One still running after
 * `timeoutMs` is SIGKILLed and named in the error thrown: a replica that ignores SIGTERM is a bug to
 * see, not a test run that hangs and leaves its broker and Redis behind.
 */
export async function stopReplicas(replicas: HubReplica[], timeoutMs = 10_000): Promise<void> {
  const stuck: string[] = [];
  await Promise.all(
    replicas.filter(replicaAlive).map(async (r) => {
      const started = Date.now();
      await terminate(r.child, timeoutMs);
      if (r.child.signalCode === 'SIGKILL' && Date.now() - started >= timeoutMs) stuck.push(r.name);
    }),
  );
  if (stuck.length > 0) throw new Error(`replica ${stuck.join(', ')} did not exit within ${timeoutMs} ms of SIGTERM (killed)`);
}
