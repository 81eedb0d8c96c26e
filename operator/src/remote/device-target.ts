import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LookoutError } from 'lookout/core';
import { KnownHosts, SshCredentials, type SshTarget } from 'lookout/lib/ssh';
import { DeviceSession } from './device-session.js';

/** parseArgs options every SSH command takes. */
export const SSH_OPTIONS = {
  root: { type: 'string', default: '/' },
  registry: { type: 'string' },
  'known-hosts': { type: 'string' },
  'hub-data-dir': { type: 'string', default: '.lookout-dev/hub' },
  'device-id': { type: 'string' },
  'connect-timeout-ms': { type: 'string', default: '10000' },
  'timeout-ms': { type: 'string', default: '30000' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export const SSH_OPTIONS_HELP = `Device and SSH:
  <device>                   a device id from the registry file, or [user@]host[:port] (user root, port 22)
  --registry <file>          the hub's registry file (default $LOOKOUT_REGISTRY_FILE): ssh_host or ips[0], ssh_port, ssh_user
  --device-id <id>           the device's id when <device> is an address (for its hello; default the host)
  --root <dir>               the device's filesystem root (default /); tests point it at a folder
  --known-hosts <file>       pinned host keys (default $LOOKOUT_SSH_KNOWN_HOSTS, else <hub-data-dir>/ssh_known_hosts, the hub's)
  --hub-data-dir <dir>       the hub's data folder (default .lookout-dev/hub)
  --connect-timeout-ms <n>   connect, handshake and authentication (default 10000)
  --timeout-ms <n>           longest wait for one remote command (default 30000)
  Credentials come from the environment only: DEVICE_PASSWORD, or LOOKOUT_SSH_KEY_FILE (and LOOKOUT_SSH_KEY_PASSPHRASE).
  A host key that is not pinned, or another than the pinned one, is refused before any credential is sent.`;

export interface SshValues {
  root: string;
  registry?: string;
  'known-hosts'?: string;
  'hub-data-dir': string;
  'device-id'?: string;
  'connect-timeout-ms': string;
  'timeout-ms': string;
}

function positiveInt(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1)
    throw new LookoutError('config_invalid', `${flag} must be a whole number of milliseconds, not "${text}"`, { details: { usage: true } });
  return n;
}

interface RegistryEntry {
  device_id?: unknown;
  ssh_host?: unknown;
  ips?: unknown;
  ssh_port?: unknown;
  ssh_user?: unknown;
}

/**
 * Where a device is reached: its entry in the registry file (ssh_host, else its first ip; ssh_port;
 * ssh_user), or an address given as `[user@]host[:port]`.
 */
export function resolveTarget(device: string, values: SshValues): SshTarget {
  const registryPath = values.registry ?? process.env.LOOKOUT_REGISTRY_FILE;
  if (registryPath) {
    let devices: RegistryEntry[];
    try {
      devices = (JSON.parse(readFileSync(registryPath, 'utf8')) as { devices?: RegistryEntry[] }).devices ?? [];
    } catch (err) {
      throw new LookoutError('config_invalid', `registry file ${registryPath} cannot be read: ${(err as Error).message}`, { details: { file: registryPath } });
    }
    const entry = devices.find((d) => d.device_id === device);
    if (entry) {
      const host =
        typeof entry.ssh_host === 'string' ? entry.ssh_host : Array.isArray(entry.ips) && typeof entry.ips[0] === 'string' ? entry.ips[0] : undefined;
      if (!host) throw new LookoutError('target_not_allowed', `${device} has no ssh_host or ips in ${registryPath}`, { details: { target: device } });
      return {
        deviceId: device,
        host,
        port: typeof entry.ssh_port === 'number' ? entry.ssh_port : 22,
        user: typeof entry.ssh_user === 'string' ? entry.ssh_user : 'root',
        hostFromFile: true,
      };
    }
  }
  const match = /^(?:([a-z_][a-z0-9_.-]{0,31})@)?(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i.exec(device);
  if (!match) {
    throw new LookoutError(
      'target_unknown',
      `"${device}" is neither a device of the registry file${registryPath ? ` ${registryPath}` : ''} nor [user@]host[:port]`,
      {
        details: { target: device, usage: true },
      },
    );
  }
  const host = match[2].replace(/^\[|\]$/g, '');
  const port = match[3] ? Number(match[3]) : 22;
  if (port < 1 || port > 65535) throw new LookoutError('config_invalid', `port ${port} is out of range`, { details: { usage: true } });
  return { deviceId: values['device-id'] ?? host, host, port, user: match[1] ?? 'root', hostFromFile: true };
}

export function knownHostsPath(values: SshValues): string {
  return resolve(values['known-hosts'] ?? process.env.LOOKOUT_SSH_KNOWN_HOSTS ?? join(values['hub-data-dir'], 'ssh_known_hosts'));
}

/** The credentials from the environment: DEVICE_PASSWORD and/or LOOKOUT_SSH_KEY_FILE. Never a flag: a flag shows in `ps`. */
export function credentialsFromEnv(): SshCredentials {
  const credentials = SshCredentials.load({
    password: process.env.DEVICE_PASSWORD || undefined,
    keyFile: process.env.LOOKOUT_SSH_KEY_FILE || undefined,
    passphrase: process.env.LOOKOUT_SSH_KEY_PASSPHRASE || undefined,
  });
  if (!credentials.configured) {
    throw new LookoutError('ssh_not_configured', 'no SSH credentials: set DEVICE_PASSWORD or LOOKOUT_SSH_KEY_FILE in the environment');
  }
  return credentials;
}

export function commandTimeoutMs(values: SshValues): number {
  return positiveInt(values['timeout-ms'], '--timeout-ms');
}

/** Opens the SSH session a command works through. */
export function openSession(device: string, values: SshValues): Promise<DeviceSession> {
  // The device's root is a path on the device, where no working folder means anything.
  if (!values.root.startsWith('/')) {
    throw new LookoutError('config_invalid', `--root is a path on the device and must be absolute, not "${values.root}"`, { details: { usage: true } });
  }
  const target = resolveTarget(device, values);
  return DeviceSession.open({
    target,
    credentials: credentialsFromEnv(),
    knownHosts: new KnownHosts(knownHostsPath(values)),
    connectTimeoutMs: positiveInt(values['connect-timeout-ms'], '--connect-timeout-ms'),
    commandTimeoutMs: commandTimeoutMs(values),
    root: values.root,
  });
}
