import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../core/src/paths/package-root.js';
import type { ReadyLine } from '../../edge/src/edge-cli.js';

/**
 * `lookout-edge` as a child process, for integration tests: started with a temp data root and a
 * free tool port unless told otherwise, resolved once it printed its ready line. Stopped by pid,
 * never by name; a test process that dies takes its devices with it.
 */
export interface DeviceProcessOptions {
  deviceId: string;
  /** `camera`, `precision` or an image file path. */
  image?: string;
  layer?: string;
  layerEnv?: string;
  /** Broker URL; required for the run mode. */
  mqtt: string;
  role?: string;
  /** Default a fresh temp dir, removed by stop/kill. */
  dataDir?: string;
  /** Default 0 (free). */
  toolPort?: number;
  /** Default true: --source sim. */
  sim?: boolean;
  extraArgs?: string[];
  /** Added to the inherited environment (plugin settings such as HEALTH_INTERVAL_MS). */
  env?: Record<string, string>;
  /** Default 15 000 ms. */
  readyTimeoutMs?: number;
}

export interface DeviceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DeviceProcess {
  readonly ready: ReadyLine;
  readonly child: ChildProcess;
  readonly dataDir: string;
  readonly exited: Promise<DeviceExit>;
  /** stderr so far (the device's pino log), for failure messages. */
  logs(): string;
  /** SIGTERM (graceful), SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<DeviceExit>;
  /** SIGKILL: the broker sees the connection drop and publishes the last-will. */
  kill(): Promise<DeviceExit>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function edgeBinary(): string {
  return join(packageRoot(), 'bin', 'lookout-edge.js');
}

export function deviceArgs(o: DeviceProcessOptions, dataDir: string): string[] {
  const args = ['--device-id', o.deviceId, '--mqtt', o.mqtt, '--data-dir', dataDir, '--tool-port', String(o.toolPort ?? 0)];
  if (o.sim ?? true) args.push('--source', 'sim');
  if (o.image) args.push('--image', o.image);
  if (o.layer) args.push('--layer', o.layer);
  if (o.layerEnv) args.push('--layer-env', o.layerEnv);
  if (o.role) args.push('--role', o.role);
  return [...args, ...(o.extraArgs ?? [])];
}

export async function startDeviceProcess(options: DeviceProcessOptions): Promise<DeviceProcess> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), `lookout-${options.deviceId}-`));
  const child = spawn(process.execPath, [edgeBinary(), ...deviceArgs(options, dataDir)], {
    // The device's log is kept in memory for failure messages, whatever level the test run uses.
    env: { ...process.env, LOOKOUT_LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
  });
  const exited = new Promise<DeviceExit>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, signal });
    }),
  );

  const timeoutMs = options.readyTimeoutMs ?? 15_000;
  const ready = await new Promise<ReadyLine>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${options.deviceId} printed no ready line within ${timeoutMs} ms:\n${tail(stderr)}`));
    }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      for (const line of stdout.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const parsed = JSON.parse(line) as ReadyLine;
          if (parsed.event === 'ready') {
            clearTimeout(timer);
            resolve(parsed);
            return;
          }
        } catch {
          // a partial line: wait for the rest
        }
      }
    });
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`${options.deviceId} exited before ready (code ${e.code}, signal ${e.signal}):\n${tail(stderr)}`));
    });
  });

  const signalAndWait = async (signal: NodeJS.Signals, timeoutMs: number): Promise<DeviceExit> => {
    if (child.exitCode !== null || child.signalCode !== null) return exited;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    ready,
    child,
    dataDir,
    exited,
    logs: () => stderr,
    stop: (ms = 5_000) => signalAndWait('SIGTERM', ms),
    kill: () => signalAndWait('SIGKILL', 1_000),
  };
}

/** Runs a one-shot mode (`--tool`, `--health`, `--check-update`) to its end. */
export function runEdgeOnce(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [edgeBinary(), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`lookout-edge ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${tail(stderr)}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

function tail(text: string): string {
  return text.split('\n').slice(-30).join('\n');
}
