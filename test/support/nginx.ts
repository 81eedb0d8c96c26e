import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { launchOnFreePort } from './free-port.js';
import { acceptsTcp, terminate } from './server-process.js';

/**
 * A real nginx in front of hub replicas, running the shipped deploy/replicas/nginx.conf with only
 * its upstream servers and its listen line replaced, so a test proves the file users get. The
 * binary is Debian's, unpacked (never installed: no service, nothing on :80) into
 * .lookout-dev/nginx by scripts/setup-system.sh. It runs in the foreground as one process
 * (`master_process off`: a SIGKILL leaves no workers behind), with its pid, logs and temp files in
 * its own temp dir, on a free port of 127.0.0.1, and is stopped by pid, never by name.
 */
export interface Nginx {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly pid: number | undefined;
  /** The access log's lines: `<method> <uri> <status> upstream=<addresses tried> upstream_status=<their statuses>`. */
  accessLog(): string[];
  /** The error log, for failure messages. */
  errorLog(): string;
  /** SIGTERM (nginx's fast shutdown), SIGKILL after `timeoutMs`; removes the temp dir. */
  stop(timeoutMs?: number): Promise<void>;
}

export interface NginxOptions {
  /** The replicas, as base URLs (http://127.0.0.1:<port>): one upstream `server` line each. */
  upstreams: string[];
  startTimeoutMs?: number;
}

const HOST = '127.0.0.1';
/** The shipped config: what goes in nginx's http block (an upstream and a server). */
export const SHIPPED_NGINX_CONF = join(packageRoot(), 'deploy', 'replicas', 'nginx.conf');
const running = new Set<ChildProcess>();

// A test that crashes must not leave an nginx behind; only the processes started here are signalled.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function findNginx(): string | null {
  for (const path of [join(packageRoot(), '.lookout-dev', 'nginx', 'usr', 'sbin', 'nginx'), '/usr/sbin/nginx']) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // next
    }
  }
  return null;
}

/**
 * The shipped config with its upstream servers replaced by `upstreams` (each keeps the parameters of
 * the shipped first server line: max_fails, fail_timeout) and `listen 80;` by `listen <listen>;`.
 * Throws when the file no longer has those lines, so a change to it cannot go untested.
 */
export function shippedConfigFor(upstreams: string[], listen: string): string {
  if (upstreams.length === 0) throw new Error('nginx: no upstreams given');
  const text = readFileSync(SHIPPED_NGINX_CONF, 'utf8');
  const block = /^upstream lookout_hubs \{\n[\s\S]*?^\}\n/m.exec(text);
  if (!block) throw new Error(`${SHIPPED_NGINX_CONF}: no "upstream lookout_hubs { … }" block`);
  const serverLine = /^([ \t]*)server\s+\S+((?:\s+[a-z_]+=\S+)*);$/;
  const lines = block[0].split('\n');
  const first = lines.findIndex((line) => serverLine.test(line));
  if (first < 0) throw new Error(`${SHIPPED_NGINX_CONF}: no server lines in the upstream block`);
  const [, indent, params] = serverLine.exec(lines[first])!;
  // The shipped server lines go; the test's take the place of the first.
  const upstream = lines.filter((line) => !serverLine.test(line));
  upstream.splice(first, 0, ...upstreams.map((u) => `${indent}server ${new URL(u).host}${params};`));
  const listenLines = text.match(/^[ \t]*listen 80;$/gm) ?? [];
  if (listenLines.length !== 1) throw new Error(`${SHIPPED_NGINX_CONF}: expected one "listen 80;" line, found ${listenLines.length}`);
  return text.replace(block[0], () => upstream.join('\n')).replace(/^([ \t]*)listen 80;$/m, `$1listen ${listen};`);
}

/**
 * The main config around the shipped one, standing in for a distribution's /etc/nginx/nginx.conf:
 * everything in `dir` (the compiled-in paths under /var/lib/nginx and /run are not ours).
 */
function writeConfig(dir: string, upstreams: string[], port: number): string {
  writeFileSync(join(dir, 'lookout-hub.conf'), shippedConfigFor(upstreams, `${HOST}:${port}`));
  const main = join(dir, 'nginx.conf');
  writeFileSync(
    main,
    [
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 512; }',
      'http {',
      '    default_type application/octet-stream;',
      "    log_format lookout_test '$request_method $uri $status upstream=$upstream_addr upstream_status=$upstream_status';",
      `    access_log ${join(dir, 'access.log')} lookout_test;`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `    ${kind}_temp_path ${join(dir, kind)};`),
      `    include ${join(dir, 'lookout-hub.conf')};`,
      '}',
    ].join('\n') + '\n',
  );
  return main;
}

function binaryOrThrow(): string {
  const binary = findNginx();
  if (!binary) throw new Error('nginx not found in .lookout-dev/nginx (run scripts/setup-system.sh: it unpacks Debian’s nginx there)');
  return binary;
}

/** `nginx -t` on the shipped config with `upstreams` filled in: its exit code and what it said. */
export function checkShippedConfig(upstreams: string[]): { status: number | null; output: string } {
  const binary = binaryOrThrow();
  const dir = mkdtempSync(join(tmpdir(), 'lookout-nginx-t-'));
  try {
    const conf = writeConfig(dir, upstreams, 8788);
    const result = spawnSync(binary, ['-t', '-p', `${dir}/`, '-e', join(dir, 'error.log'), '-c', conf], { encoding: 'utf8', timeout: 10_000 });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startNginx(options: NginxOptions): Promise<Nginx> {
  const binary = binaryOrThrow();
  const dir = mkdtempSync(join(tmpdir(), 'lookout-nginx-'));
  const timeoutMs = options.startTimeoutMs ?? 5_000;
  const output: string[] = [];
  const errorLog = (): string => {
    try {
      return readFileSync(join(dir, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  };
  let child: ChildProcess | null = null;
  let port = 0;

  const launch = async (): Promise<void> => {
    const conf = writeConfig(dir, options.upstreams, port);
    const proc = spawn(binary, ['-p', `${dir}/`, '-e', join(dir, 'error.log'), '-c', conf, '-g', 'daemon off; master_process off;'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    running.add(proc);
    const collect = (chunk: Buffer): void => {
      output.push(chunk.toString());
      if (output.length > 100) output.shift();
    };
    proc.stdout?.on('data', collect);
    proc.stderr?.on('data', collect);
    const exited = new Promise<'exited'>((resolve) => proc.once('exit', () => resolve('exited')));
    proc.once('exit', () => running.delete(proc));
    const deadline = Date.now() + timeoutMs;
    // Both: the port accepts and our nginx wrote its pid (the port could answer for another process).
    const ours = (): boolean => existsSync(join(dir, 'nginx.pid')) && readFileSync(join(dir, 'nginx.pid'), 'utf8').trim() === String(proc.pid);
    for (;;) {
      const outcome = await Promise.race([exited, acceptsTcp(HOST, port).then((ok) => (ok ? 'up' : 'down'))]);
      if (outcome === 'up' && ours()) return;
      if (outcome === 'exited') throw new Error(`nginx exited on start (port ${port}):\n${output.join('')}${errorLog()}`);
      if (Date.now() > deadline) {
        await terminate(proc, 1_000);
        throw new Error(`nginx did not listen on ${port} within ${timeoutMs} ms:\n${errorLog()}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  await launchOnFreePort({ host: HOST, dir, usePort: (p) => (port = p), launch });

  let stopped = false;
  return {
    port,
    url: `http://${HOST}:${port}`,
    dir,
    get pid() {
      return child?.pid;
    },
    accessLog: () => {
      try {
        return readFileSync(join(dir, 'access.log'), 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
    errorLog,
    async stop(stopTimeoutMs = 3_000) {
      if (stopped) return;
      stopped = true;
      if (child) await terminate(child, stopTimeoutMs);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
