import { join, resolve } from 'node:path';
import { z } from 'zod';
import { definePlugin } from 'lookout/core';
import { KnownHosts, connectSsh, SshCredentials } from 'lookout/lib/ssh';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { HubDeviceSsh } from './device-ssh.js';
import { DEVICE_SSH } from './service.js';
import { SshPool } from './ssh-pool.js';

/** OpenSSH's default MaxSessions is 10: stay under it. */
const CHANNELS_PER_CONNECTION = 6;
const KEEPALIVE_MS = 15_000;

/**
 * SSH to registered devices for the recordings fallbacks (pull-recording, snapshot, chunk listing
 * when the tool server is down): root with DEVICE_PASSWORD or a key file, host keys pinned in the
 * hub's known-hosts file, remote paths confined to each device's recordings root.
 */
export default definePlugin({
  name: 'device-ssh',
  version: '1.0.0',
  core: '^1',
  description: 'SSH (SFTP and a shell listing) to the recordings root of registered devices, host keys pinned (DEVICE_SSH service)',
  requires: [DEVICE_REGISTRY],
  optionalRequires: [DEBUG_RING],
  provides: [DEVICE_SSH],
  config: z.object({
    DEVICE_PASSWORD: z.string().min(1).optional().describe('SSH password of the devices (user from the registry file, default root); never logged'),
    LOOKOUT_SSH_KEY_FILE: z.string().min(1).optional().describe('private key file for SSH to devices (with or instead of DEVICE_PASSWORD)'),
    LOOKOUT_SSH_KEY_PASSPHRASE: z.string().min(1).optional().describe('passphrase of LOOKOUT_SSH_KEY_FILE'),
    LOOKOUT_SSH_KNOWN_HOSTS: z
      .string()
      .min(1)
      .optional()
      .describe('pinned device host keys (OpenSSH known_hosts lines); default <hub data dir>/ssh_known_hosts'),
    LOOKOUT_SSH_ACCEPT_NEW: z
      .enum(['0', '1'])
      .default('0')
      .describe(
        '1 pins the key of a device not in the known-hosts file on first use, only at an address the registry file names (ips, ssh_host, tool_url; never one from a hello); a changed key is refused still',
      ),
    LOOKOUT_SSH_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000).describe('TCP connect, handshake and authentication'),
    LOOKOUT_SSH_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000).describe('longest silence within an SSH operation'),
    LOOKOUT_SSH_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1024).default(16).describe('open SSH connections across the fleet'),
    LOOKOUT_SSH_MAX_WAITING: z.coerce
      .number()
      .int()
      .min(0)
      .max(10_000)
      .default(32)
      .describe('callers that may wait for a connection or channel; past that, refused at once'),
    LOOKOUT_SSH_IDLE_S: z.coerce.number().min(0).max(3600).default(30).describe('an unused connection is closed after this long'),
    LOOKOUT_SSH_MAX_DOWNLOAD_BYTES: z.coerce
      .number()
      .int()
      .min(1)
      .default(2 * 1024 * 1024 * 1024)
      .describe('largest file a download copies'),
  }),
  start(ctx) {
    const cfg = ctx.config;
    const ring = ctx.services.optional(DEBUG_RING);
    const credentials = SshCredentials.load({ password: cfg.DEVICE_PASSWORD, keyFile: cfg.LOOKOUT_SSH_KEY_FILE, passphrase: cfg.LOOKOUT_SSH_KEY_PASSPHRASE });
    const knownHosts = new KnownHosts(
      cfg.LOOKOUT_SSH_KNOWN_HOSTS ? resolve(cfg.LOOKOUT_SSH_KNOWN_HOSTS) : join(resolve(ctx.runtime.dataDir), 'ssh_known_hosts'),
    );
    const acceptNew = cfg.LOOKOUT_SSH_ACCEPT_NEW === '1';
    const pool = new SshPool(
      {
        maxConnections: cfg.LOOKOUT_SSH_MAX_CONNECTIONS,
        maxWaiting: cfg.LOOKOUT_SSH_MAX_WAITING,
        channelsPerConnection: CHANNELS_PER_CONNECTION,
        idleMs: cfg.LOOKOUT_SSH_IDLE_S * 1000,
        waitMs: cfg.LOOKOUT_SSH_CONNECT_TIMEOUT_MS,
      },
      (target) =>
        connectSsh(target, {
          credentials,
          knownHosts,
          acceptNew,
          timeoutMs: cfg.LOOKOUT_SSH_CONNECT_TIMEOUT_MS,
          keepaliveMs: KEEPALIVE_MS,
          onPinned: (t, key, fingerprint) => {
            const message = `pinned the ${key.type} SSH host key ${fingerprint} of ${t.deviceId} at ${t.host}:${t.port} in ${knownHosts.path} (first use)`;
            ctx.log.warn({ device_id: t.deviceId, host: t.host, port: t.port, fingerprint }, message);
            ring?.record({ kind: 'ssh', device_id: t.deviceId, message, details: { host: t.host, port: t.port, key_type: key.type, fingerprint } });
          },
        }),
    );
    ctx.onStop(() => pool.closeAll());
    const ssh = new HubDeviceSsh({
      registry: ctx.services.get(DEVICE_REGISTRY),
      credentials,
      pool,
      idleTimeoutMs: cfg.LOOKOUT_SSH_TIMEOUT_MS,
      maxDownloadBytes: cfg.LOOKOUT_SSH_MAX_DOWNLOAD_BYTES,
      onFailure: (deviceId, err) => {
        ctx.log.debug({ device_id: deviceId, code: err.code }, err.message);
        ring?.record({ kind: 'ssh', device_id: deviceId, message: err.message, details: { code: err.code, ...(err.details as object | undefined) } });
      },
    });
    ctx.services.provide(DEVICE_SSH, ssh);
    if (!credentials.configured)
      ctx.log.info('device SSH not configured (no DEVICE_PASSWORD or LOOKOUT_SSH_KEY_FILE): SSH fallbacks answer ssh_not_configured');
    else ctx.log.info({ credentials: credentials.kinds, known_hosts: knownHosts.path, accept_new: acceptNew }, 'device SSH ready');
  },
});
