import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { terminate } from './server-process.js';

/**
 * A real OpenSSH server for integration tests: `/usr/sbin/sshd -D -e -f <its own config>` on a free
 * port of 127.0.0.1, with its own host key and key authentication as root (the user the tests run
 * as) through its own authorized_keys file. Stopped by pid, never by name.
 *
 *   const sshd = await startSshd();                  // in before()
 *   writeFileSync(knownHosts, sshd.knownHostsLine + '\n');
 *   // registry file: { device_id, ips: ['127.0.0.1'], ssh_port: sshd.port, recordings_root: dir }
 *   // hub env: LOOKOUT_SSH_KEY_FILE=sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS=knownHosts
 *   await sshd.stop();                               // in after()
 */
export interface SshdOptions {
  /** Serve SFTP (internal-sftp). Default true; false leaves only exec, as on a device without sftp-server. */
  sftp?: boolean;
  /** Host key type. Default ed25519. */
  hostKeyType?: 'ed25519' | 'ecdsa' | 'rsa';
  /** Extra sshd_config lines. */
  extraConfig?: string[];
  /** How long to wait for the listener. Default 5 000 ms. */
  startTimeoutMs?: number;
}

export interface Sshd {
  readonly host: string;
  readonly port: number;
  /** The user it lets in (the one the tests run as: root here). */
  readonly user: string;
  /** Temp dir with the config, keys and authorized_keys. */
  readonly dir: string;
  /** Private key that authenticates (`LOOKOUT_SSH_KEY_FILE`). */
  readonly clientKeyPath: string;
  /** `ssh-ed25519 AAAA…` of the server. */
  readonly hostPublicKey: string;
  /** The known_hosts line pinning this server: `[127.0.0.1]:<port> ssh-ed25519 AAAA…`. */
  readonly knownHostsLine: string;
  readonly pid: number | undefined;
  /** sshd's own log (last few hundred lines), for failure messages. */
  logs(): string;
  stop(timeoutMs?: number): Promise<void>;
}

const HOST = '127.0.0.1';
const SSHD = '/usr/sbin/sshd';
const running = new Set<ChildProcess>();
const run = promisify(execFile);

// A test that crashes must not leave servers behind; only the processes started here are signalled.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A fresh key pair made by ssh-keygen: the private key path and the public key line (`type base64`). */
export async function generateKeyPair(dir: string, name: string, type: 'ed25519' | 'ecdsa' | 'rsa' = 'ed25519'): Promise<{ path: string; publicKey: string }> {
  const path = join(dir, name);
  await run('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-C', `lookout-test-${name}`, '-f', path]);
  const publicKey = readFileSync(`${path}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  return { path, publicKey };
}

export async function startSshd(options: SshdOptions = {}): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), 'lookout-sshd-'));
  const timeoutMs = options.startTimeoutMs ?? 5_000;
  const logLines: string[] = [];
  try {
    // sshd refuses to start without its privilege separation directory.
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    const hostKey = await generateKeyPair(dir, 'ssh_host_key', options.hostKeyType ?? 'ed25519');
    const client = await generateKeyPair(dir, 'client_key');
    writeFileSync(join(dir, 'authorized_keys'), `${client.publicKey}\n`, { mode: 0o600 });
    const user = userInfo().username;
    for (let attempt = 0; ; attempt++) {
      const port = await freePort(HOST);
      const config = join(dir, 'sshd_config');
      writeFileSync(
        config,
        [
          `Port ${port}`,
          `ListenAddress ${HOST}`,
          `HostKey ${hostKey.path}`,
          'PidFile none',
          'UsePAM no',
          'StrictModes no',
          'PermitRootLogin prohibit-password',
          'PubkeyAuthentication yes',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
          'LogLevel VERBOSE',
          ...(options.sftp === false ? [] : ['Subsystem sftp internal-sftp']),
          ...(options.extraConfig ?? []),
        ].join('\n') + '\n',
      );
      const proc = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
      running.add(proc);
      proc.once('exit', () => running.delete(proc));
      let listening = false;
      const collect = (chunk: Buffer): void => {
        const lines = chunk.toString().split('\n').filter(Boolean);
        if (lines.some((l) => l.includes(`Server listening on ${HOST} port ${port}`))) listening = true;
        logLines.push(...lines);
        if (logLines.length > 400) logLines.splice(0, logLines.length - 400);
      };
      proc.stdout.on('data', collect);
      proc.stderr.on('data', collect);
      let exited = false;
      proc.once('exit', () => (exited = true));
      const deadline = Date.now() + timeoutMs;
      while (!listening && !exited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      if (listening) return handle(proc, port, user, dir, hostKey.publicKey, client.path, logLines);
      await terminate(proc, 1_000);
      // Another process may have taken the port between the probe and sshd's bind: try a few.
      if (attempt >= 3 || !logLines.some((l) => /Address already in use|Bind to port/.test(l))) {
        throw new Error(`sshd did not listen on ${port} within ${timeoutMs} ms:\n${logLines.slice(-20).join('\n')}`);
      }
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

function handle(proc: ChildProcess, port: number, user: string, dir: string, hostPublicKey: string, clientKeyPath: string, logLines: string[]): Sshd {
  let stopped = false;
  return {
    host: HOST,
    port,
    user,
    dir,
    clientKeyPath,
    hostPublicKey,
    knownHostsLine: `[${HOST}]:${port} ${hostPublicKey}`,
    pid: proc.pid,
    logs: () => logLines.join('\n'),
    async stop(timeoutMs = 3_000) {
      if (stopped) return;
      stopped = true;
      await terminate(proc, timeoutMs);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
