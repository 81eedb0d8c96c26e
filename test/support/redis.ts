import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchOnFreePort } from './free-port.js';
import { acceptsTcp, terminate } from './server-process.js';

/**
 * A real redis-server for tests and benches: its own temp dir and config, a free port on
 * 127.0.0.1, stopped by pid (never by name). Installed by scripts/setup-system.sh (Debian's
 * `redis-server`); the packaged daemon is never used. With `persistence` (append-only file in the
 * temp dir) what was written survives `restart()`, as a production Redis would keep it.
 */
export interface RedisServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly pid: number | undefined;
  logs(): string;
  /** Stops (SIGTERM: the append-only file is flushed) and starts again on the same port. */
  restart(): Promise<void>;
  /** Stops without starting again (until `start()`), to test a hub with Redis down. */
  pause(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function findRedisServer(): string | null {
  for (const path of ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server']) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // next
    }
  }
  return null;
}

export async function startRedis(options: { persistence?: boolean; startTimeoutMs?: number } = {}): Promise<RedisServer> {
  const binary = findRedisServer();
  if (!binary) throw new Error('redis-server not found (run scripts/setup-system.sh or apt-get install redis-server)');
  const dir = mkdtempSync(join(tmpdir(), 'lookout-redis-'));
  const logLines: string[] = [];
  let child: ChildProcess | null = null;
  let port = 0;
  const timeoutMs = options.startTimeoutMs ?? 5_000;

  const config = (): string => {
    const path = join(dir, 'redis.conf');
    writeFileSync(
      path,
      [
        `bind ${HOST}`,
        `port ${port}`,
        `dir ${dir}`,
        'daemonize no',
        'save ""',
        `appendonly ${options.persistence === false ? 'no' : 'yes'}`,
        'appendfsync everysec',
        'loglevel warning',
        'logfile ""',
      ].join('\n') + '\n',
    );
    return path;
  };

  const launch = async (): Promise<void> => {
    const proc = spawn(binary, [config()], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    running.add(proc);
    const collect = (chunk: Buffer): void => {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      if (logLines.length > 200) logLines.splice(0, logLines.length - 200);
    };
    proc.stdout?.on('data', collect);
    proc.stderr?.on('data', collect);
    const exited = new Promise<'exited'>((resolve) => proc.once('exit', () => resolve('exited')));
    proc.once('exit', () => running.delete(proc));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const outcome = await Promise.race([exited, acceptsTcp(HOST, port).then((ok) => (ok ? 'up' : 'down'))]);
      if (outcome === 'up') return;
      if (outcome === 'exited') throw new Error(`redis-server exited on start (port ${port}):\n${logLines.slice(-20).join('\n')}`);
      if (Date.now() > deadline) {
        await terminate(proc, 1_000);
        throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms:\n${logLines.slice(-20).join('\n')}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  await launchOnFreePort({ host: HOST, dir, usePort: (p) => (port = p), launch });

  let stopped = false;
  return {
    host: HOST,
    get port() {
      return port;
    },
    get url() {
      return `redis://${HOST}:${port}`;
    },
    dir,
    get pid() {
      return child?.pid;
    },
    logs: () => logLines.join('\n'),
    async restart() {
      if (child) await terminate(child, 3_000);
      await launch();
    },
    async pause() {
      if (child) await terminate(child, 3_000);
      child = null;
    },
    async start() {
      if (!child) await launch();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child) await terminate(child, 3_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
