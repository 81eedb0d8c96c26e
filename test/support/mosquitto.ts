import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, join } from 'node:path';
import { launchOnFreePort } from './free-port.js';
import { acceptsTcp, terminate } from './server-process.js';

/**
 * A real mosquitto for integration tests and benches: its own temp dir and config, a free port on
 * 127.0.0.1, stopped by pid (never by name). Installed by scripts/setup-system.sh.
 */
export interface MosquittoOptions {
  /** Default: a free port. `restart()` keeps whatever port was used. */
  port?: number;
  /** Keep sessions and retained messages across `restart()` (mosquitto.db in the temp dir). Default false. */
  persistence?: boolean;
  /** user name → password; when given, anonymous clients are refused. */
  users?: Record<string, string>;
  /** A password_file written elsewhere (e.g. by `lookout broker-acl`); anonymous clients are refused. */
  passwordFile?: string;
  /** An acl_file written elsewhere (`lookout broker-acl`). */
  aclFile?: string;
  /** Per-client queue of QoS 1/2 messages (mosquitto's default is 1000); raise it for benches. */
  maxQueuedMessages?: number;
  /** Per-client in-flight QoS 1/2 messages (mosquitto's default is 20). */
  maxInflightMessages?: number;
  /**
   * The listener and authentication lines, given the port the broker is waited on (e.g. a
   * `lookout broker-acl --conf` snippet with its ports replaced): they replace this file's own
   * listener, users, password_file and acl_file lines.
   */
  listeners?: (port: number) => string[];
  /** Extra lines appended to the generated config. */
  extraConfig?: string[];
  /** How long to wait for the listener. Default 5 000 ms. */
  startTimeoutMs?: number;
}

export interface Mosquitto {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** The temp dir holding the config, password file and persistence. */
  readonly dir: string;
  readonly pid: number | undefined;
  /** mosquitto's own log lines (last few hundred), for failure messages. */
  logs(): string;
  /** Stops and starts again on the same port (sessions survive only with `persistence`). */
  restart(): Promise<void>;
  /** Stops the broker but keeps its dir and port, for an outage of the test's length; `resume()` ends it. */
  halt(): Promise<void>;
  resume(): Promise<void>;
  /** SIGTERM, then SIGKILL after `timeoutMs`; removes the temp dir. */
  stop(timeoutMs?: number): Promise<void>;
}

const HOST = '127.0.0.1';
const running = new Set<ChildProcess>();

// A test that crashes must not leave brokers behind; only the processes started here are signalled.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function findMosquitto(): string | null {
  const candidates = ['/usr/sbin/mosquitto', ...(process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'mosquitto'))];
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // next
    }
  }
  return null;
}

export async function startMosquitto(options: MosquittoOptions = {}): Promise<Mosquitto> {
  const binary = findMosquitto();
  if (!binary) throw new Error('mosquitto not found (run scripts/setup-system.sh or apt-get install mosquitto)');
  const dir = mkdtempSync(join(tmpdir(), 'lookout-mosquitto-'));
  const timeoutMs = options.startTimeoutMs ?? 5_000;
  const logLines: string[] = [];
  let child: ChildProcess | null = null;
  let port = options.port ?? 0;

  const writeConfig = (): string => {
    const lines = [
      ...(options.listeners ? [] : [`listener ${port} ${HOST}`]),
      // Running as root, mosquitto switches to its own user and could not read our temp dir.
      `user ${userInfo().username}`,
      `persistence ${options.persistence ? 'true' : 'false'}`,
      `persistence_location ${dir}/`,
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      'log_type notice',
      'log_type information',
      `max_queued_messages ${options.maxQueuedMessages ?? 1000}`,
    ];
    if (options.maxInflightMessages !== undefined) lines.push(`max_inflight_messages ${options.maxInflightMessages}`);
    if (options.listeners) {
      lines.push(...options.listeners(port));
    } else if (options.users) {
      const passwd = join(dir, 'passwd');
      writeFileSync(
        passwd,
        Object.entries(options.users)
          .map(([u, p]) => `${u}:${passwordHash(p)}`)
          .join('\n') + '\n',
        { mode: 0o600 },
      );
      lines.push('allow_anonymous false', `password_file ${passwd}`);
    } else if (options.passwordFile) {
      lines.push('allow_anonymous false', `password_file ${options.passwordFile}`);
    } else {
      lines.push('allow_anonymous true');
    }
    if (options.aclFile && !options.listeners) lines.push(`acl_file ${options.aclFile}`);
    lines.push(...(options.extraConfig ?? []));
    const config = join(dir, 'mosquitto.conf');
    writeFileSync(config, lines.join('\n') + '\n');
    return config;
  };

  const launch = async (): Promise<void> => {
    const proc = spawn(binary, ['-c', writeConfig()], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    running.add(proc);
    // Set by this launch's own "running" line: the kept log is trimmed, and two hundred clients
    // reconnecting can push that line out of it before the port is checked.
    let saidRunning = false;
    const collect = (chunk: Buffer): void => {
      const lines = chunk.toString().split('\n').filter(Boolean);
      if (lines.some((l) => / running$/.test(l))) saidRunning = true;
      logLines.push(...lines);
      if (logLines.length > 400) logLines.splice(0, logLines.length - 400);
    };
    proc.stdout?.on('data', collect);
    proc.stderr?.on('data', collect);
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.once('exit', () => running.delete(proc));
    const deadline = Date.now() + timeoutMs;
    // Both: our process says it runs (the port could answer for another process) and the port accepts.
    const saysRunning = (): boolean => saidRunning;
    for (;;) {
      const outcome = await Promise.race([exited.then(() => 'exited' as const), acceptsTcp(HOST, port).then((ok) => (ok ? 'up' : 'down'))]);
      if (outcome === 'up' && saysRunning()) return;
      if (outcome === 'exited') throw new Error(`mosquitto exited on start (port ${port}):\n${logLines.slice(-20).join('\n')}`);
      if (Date.now() > deadline) {
        await terminate(proc, 1_000);
        throw new Error(`mosquitto did not listen on ${port} within ${timeoutMs} ms:\n${logLines.slice(-20).join('\n')}`);
      }
      await sleep(25);
    }
  };

  await launchOnFreePort({ host: HOST, ...(options.port !== undefined ? { fixedPort: options.port } : {}), dir, usePort: (p) => (port = p), launch });

  let stopped = false;
  return {
    host: HOST,
    get port() {
      return port;
    },
    get url() {
      return `mqtt://${HOST}:${port}`;
    },
    dir,
    get pid() {
      return child?.pid;
    },
    logs: () => logLines.join('\n'),
    async restart() {
      if (stopped) throw new Error('mosquitto was stopped');
      if (child) await terminate(child, 3_000);
      await launch();
    },
    async halt() {
      if (stopped) throw new Error('mosquitto was stopped');
      if (child) await terminate(child, 3_000);
      child = null;
    },
    async resume() {
      if (stopped) throw new Error('mosquitto was stopped');
      await launch();
    },
    async stop(stopTimeoutMs = 3_000) {
      if (stopped) return;
      stopped = true;
      if (child) await terminate(child, stopTimeoutMs);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** mosquitto's `$6$` password format: base64 salt and base64 SHA-512 of password then salt. */
function passwordHash(password: string): string {
  const salt = randomBytes(12);
  const hash = createHash('sha512').update(password).update(salt).digest();
  return `$6$${salt.toString('base64')}$${hash.toString('base64')}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
