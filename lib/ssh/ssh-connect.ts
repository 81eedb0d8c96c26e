import type { Client, ConnectConfig, ServerHostKeyAlgorithm } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { fingerprintOf, hostKeyOf, knownHostsLine, type HostKey, type KnownHosts } from './known-hosts.js';
import { abortError } from './op-guard.js';
import { loadSsh2, type SshCredentials } from './ssh-credentials.js';

/** Where one device is reached. */
export interface SshTarget {
  deviceId: string;
  host: string;
  port: number;
  user: string;
  /**
   * The host is the registry file's word (DeviceSshAddress.hostFromFile). A host from a hello (any
   * bus client's word) never has its key pinned on first use: an attacker's key would be, and the
   * fleet's credentials sent to it.
   */
  hostFromFile: boolean;
}

export interface ConnectOptions {
  credentials: SshCredentials;
  knownHosts: KnownHosts;
  /** Trust on first use: an unknown key at a host the registry file names is recorded instead of refused (LOOKOUT_SSH_ACCEPT_NEW=1). */
  acceptNew: boolean;
  /** TCP connect, handshake and authentication together. */
  timeoutMs: number;
  /** Keepalive probes on an open connection (a device that vanishes is noticed). */
  keepaliveMs: number;
  signal?: AbortSignal;
  /** Told when a new host key was pinned (trust on first use). */
  onPinned?: (target: SshTarget, key: HostKey, fingerprint: string) => void;
}

/** Which server host key algorithms a known-hosts key type stands for (an `ssh-rsa` key signs with rsa-sha2-*). */
function algorithmsOf(type: string): ServerHostKeyAlgorithm[] {
  if (type === 'ssh-rsa') return ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'];
  return HOST_KEY_ALGORITHMS.filter((a) => a === type);
}
const HOST_KEY_ALGORITHMS: ServerHostKeyAlgorithm[] = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521'];

export function describeTarget(t: SshTarget): string {
  return `${t.deviceId} (${t.user}@${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port})`;
}

/**
 * Opens an authenticated SSH connection to a device whose host key is pinned in the hub's
 * known-hosts file. Failures are LookoutErrors: ssh_host_key_unknown / ssh_host_key_changed (the
 * key refused before any credential is sent), ssh_auth_failed, ssh_timeout, ssh_failed. No message
 * carries a credential: they are built here from the target and the failure's kind.
 */
export function connectSsh(target: SshTarget, options: ConnectOptions): Promise<Client> {
  const where = describeTarget(target);
  if (options.signal?.aborted) return Promise.reject(abortError(options.signal, where));
  return new Promise<Client>((resolve, reject) => {
    const client = new (loadSsh2().Client)();
    let keyRefusal: LookoutError | undefined;
    let settled = false;
    const settle = (err?: LookoutError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (!err) return resolve(client);
      client.removeAllListeners('ready');
      client.end();
      client.destroy();
      reject(err);
    };
    const timer = setTimeout(
      () =>
        settle(
          new LookoutError('ssh_timeout', `${where}: no SSH session within ${options.timeoutMs} ms`, {
            details: sshDetails(target, { timeout_ms: options.timeoutMs }),
          }),
        ),
      options.timeoutMs,
    );
    const onAbort = (): void => settle(abortError(options.signal!, where));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const verify = (blob: Buffer, done: (ok: boolean) => void): void => {
      const key = hostKeyOf(blob);
      const verdict = options.knownHosts.check(target.host, target.port, key);
      if (verdict.status === 'pinned') return done(true);
      const fingerprint = fingerprintOf(blob);
      if (verdict.status === 'changed') {
        keyRefusal = new LookoutError(
          'ssh_host_key_changed',
          `${where} presented the ${key.type} host key ${fingerprint}, not the one pinned in ${options.knownHosts.path}: refused. If the device was reinstalled, remove its line there and pin the new key after checking its fingerprint on the device`,
          { details: sshDetails(target, { key_type: key.type, fingerprint, pinned_types: verdict.pinnedTypes, known_hosts: options.knownHosts.path }) },
        );
        return done(false);
      }
      if (!options.acceptNew || !target.hostFromFile) {
        const check = `Check that fingerprint on the device (ssh-keygen -lf /etc/ssh/ssh_host_${key.type.replace(/^ssh-|-sha2-.*$/g, '')}_key.pub), then add the line "${knownHostsLine(target.host, target.port, key)}" to ${options.knownHosts.path}`;
        const way = target.hostFromFile
          ? `${check}, or start the hub once with LOOKOUT_SSH_ACCEPT_NEW=1 to pin keys on first use`
          : `The address ${target.host} comes from the device's hello, which any bus client can send, so its key is not pinned on first use${options.acceptNew ? ' (LOOKOUT_SSH_ACCEPT_NEW=1 pins only at addresses the registry file names)' : ''}: name the device's address in the registry file (ips or ssh_host), or ${check.charAt(0).toLowerCase()}${check.slice(1)}`;
        keyRefusal = new LookoutError(
          'ssh_host_key_unknown',
          `${where} presented the ${key.type} host key ${fingerprint}, which is not pinned: refused. ${way}`,
          {
            details: sshDetails(target, {
              key_type: key.type,
              fingerprint,
              known_hosts: options.knownHosts.path,
              line: knownHostsLine(target.host, target.port, key),
              address_from: target.hostFromFile ? 'registry_file' : 'hello',
            }),
          },
        );
        return done(false);
      }
      options.knownHosts.pin(target.host, target.port, key).then(
        (after) => {
          if (after.status === 'pinned') {
            options.onPinned?.(target, key, fingerprint);
            return done(true);
          }
          keyRefusal = new LookoutError('ssh_host_key_changed', `${where}: another host key was pinned for it meanwhile; ${fingerprint} refused`, {
            details: sshDetails(target, { key_type: key.type, fingerprint }),
          });
          done(false);
        },
        (err: unknown) => {
          keyRefusal = new LookoutError('ssh_failed', `${where}: the host key could not be pinned in ${options.knownHosts.path}: ${(err as Error).message}`, {
            details: sshDetails(target, { fingerprint }),
          });
          done(false);
        },
      );
    };

    client.on('ready', () => {
      forgetCredentials(client);
      settle();
    });
    client.on('error', (err: Error & { level?: string; code?: string }) => settle(keyRefusal ?? connectError(target, err)));
    client.on('close', () =>
      settle(keyRefusal ?? new LookoutError('ssh_failed', `${where}: the connection closed during the SSH handshake`, { details: sshDetails(target) })),
    );
    client.on('keyboard-interactive', (_name, _instructions, _lang, prompts, finish) => finish(options.credentials.keyboardAnswers(prompts)));

    // Ask the server for a key type already pinned for it, so a server with several keys offers the pinned one.
    const pinned = options.knownHosts.pinnedTypes(target.host, target.port).flatMap(algorithmsOf);
    const config: ConnectConfig = {
      host: target.host,
      port: target.port,
      username: target.user,
      ...options.credentials.connectOptions(),
      hostVerifier: (key: Buffer, done: (ok: boolean) => void) => {
        verify(key, done);
      },
      readyTimeout: options.timeoutMs + 1000,
      keepaliveInterval: options.keepaliveMs,
      keepaliveCountMax: 3,
      // Removed, then put first: ssh2 does not move an algorithm already in its list.
      ...(pinned.length > 0 ? { algorithms: { serverHostKey: { remove: pinned, prepend: pinned, append: [] } } } : {}),
    };
    try {
      client.connect(config);
    } catch (err) {
      settle(new LookoutError('ssh_failed', `${where}: ${(err as Error).message}`, { details: sshDetails(target) }));
    }
  });
}

/**
 * ssh2 keeps the connect options (password, parsed key) on the client for its life; authentication
 * is over once it is ready, so they are dropped, and an inspected or logged client shows none.
 */
function forgetCredentials(client: Client): void {
  const config = (client as unknown as { config?: Record<string, unknown> }).config;
  if (!config) return;
  for (const key of ['password', 'privateKey', 'passphrase']) if (key in config) config[key] = undefined;
}

/** An ssh2 connection failure as a LookoutError; ssh2's messages name the failure, never a credential. */
function connectError(target: SshTarget, err: Error & { level?: string; code?: string }): LookoutError {
  const where = describeTarget(target);
  if (err.level === 'client-authentication') {
    return new LookoutError('ssh_auth_failed', `${where} refused the SSH credentials (user ${target.user})`, { details: sshDetails(target) });
  }
  if (err.level === 'client-timeout') {
    return new LookoutError('ssh_timeout', `${where}: ${err.message}`, { details: sshDetails(target) });
  }
  const code = err.code ? ` (${err.code})` : '';
  const what = err.code === 'ECONNREFUSED' ? 'nothing listens for SSH there' : err.message;
  return new LookoutError('ssh_failed', `${where}: ${what}${code}`, { details: sshDetails(target, err.code ? { cause: err.code } : {}) });
}

export function sshDetails(target: SshTarget, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { device_id: target.deviceId, host: target.host, port: target.port, user: target.user, ...extra };
}
