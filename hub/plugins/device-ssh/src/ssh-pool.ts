import type { Client } from 'ssh2';
import { AdmissionQueue, type ReleaseSlot } from 'lookout/lib/limits';
import { LookoutError, isLookoutError } from 'lookout/core';
import { abortError, describeTarget, type SshTarget } from 'lookout/lib/ssh';

export interface PoolLimits {
  /** Open connections across all devices. */
  maxConnections: number;
  /** Callers that may wait, per device for a channel and overall for a connection; past that, refused at once. */
  maxWaiting: number;
  /** Operations at once on one connection (OpenSSH's MaxSessions is 10 by default). */
  channelsPerConnection: number;
  /** An unused connection is closed after this long. */
  idleMs: number;
  /** How long a caller waits for a connection slot. */
  waitMs: number;
}

interface Entry {
  key: string;
  target: SshTarget;
  ready: Promise<Client>;
  client?: Client;
  channels: AdmissionQueue;
  releaseSlot?: ReleaseSlot;
  idleTimer?: NodeJS.Timeout;
  closed: boolean;
}

/**
 * SSH connections to devices, one per device address, reused while in use and for `idleMs` after,
 * at most `maxConnections` in all. A caller beyond the bounds waits in a bounded line or is refused
 * at once (ssh_failed, reason busy) instead of piling sockets on the devices.
 */
export class SshPool {
  private readonly entries = new Map<string, Entry>();
  private readonly slots: AdmissionQueue;
  private closed = false;

  constructor(
    private readonly limits: PoolLimits,
    private readonly connect: (target: SshTarget) => Promise<Client>,
  ) {
    this.slots = new AdmissionQueue({ concurrency: limits.maxConnections, maxWaiting: limits.maxWaiting });
  }

  /** Open connections (connecting ones included). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Runs `fn` on a connection to `target`. An operation that fails because a reused connection
   * had died meanwhile (the device rebooted) runs once more on a fresh one; every operation here
   * only reads, so running it again is harmless.
   */
  async use<T>(target: SshTarget, signal: AbortSignal | undefined, fn: (client: Client) => Promise<T>): Promise<T> {
    let reconnected = false;
    let channelWaits = 0;
    for (;;) {
      if (this.closed) throw new LookoutError('ssh_failed', 'the SSH pool is closed (the hub is stopping)', { details: { reason: 'closed' } });
      if (signal?.aborted) throw abortError(signal, describeTarget(target));
      const entry = this.entryFor(target);
      const reused = entry.client !== undefined;
      const release = await this.channel(entry, signal);
      try {
        const client = await untilAborted(entry.ready, signal, describeTarget(target));
        return await fn(client);
      } catch (err) {
        // sshd frees a closed session's slot (MaxSessions) a moment after the client does: a channel
        // refused on a connection that is still up is asked for again on it, not a reason to reconnect.
        if (isChannelRefused(err) && !entry.closed && !signal?.aborted && channelWaits < CHANNEL_RETRIES) {
          channelWaits++;
          await new Promise((r) => setTimeout(r, 40 * channelWaits));
          continue;
        }
        if (!reconnected && reused && !signal?.aborted && isStale(err, entry)) {
          reconnected = true;
          this.close(entry);
          continue;
        }
        // A device that broke the protocol on this connection: it is not used again.
        if (isBroken(err)) this.close(entry);
        throw err;
      } finally {
        release();
        this.afterUse(entry);
      }
    }
  }

  /** What an inspection shows (not the connections, whose internals hold key material). */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `SshPool(${this.entries.size} connections of ${this.limits.maxConnections})`;
  }

  toJSON(): { connections: number; max_connections: number } {
    return { connections: this.entries.size, max_connections: this.limits.maxConnections };
  }

  /** Closes every connection; later calls are refused. */
  closeAll(): void {
    this.closed = true;
    for (const entry of [...this.entries.values()]) this.close(entry);
  }

  private entryFor(target: SshTarget): Entry {
    const key = `${target.deviceId}|${target.user}@${target.host}:${target.port}`;
    const existing = this.entries.get(key);
    if (existing && !existing.closed) return existing;
    const entry: Entry = {
      key,
      target,
      channels: new AdmissionQueue({ concurrency: this.limits.channelsPerConnection, maxWaiting: this.limits.maxWaiting }),
      closed: false,
      ready: Promise.resolve(undefined as unknown as Client),
    };
    entry.ready = this.open(entry);
    // Callers that gave up before it opened must not leave an unhandled rejection behind.
    entry.ready.catch(() => undefined);
    this.entries.set(key, entry);
    return entry;
  }

  private async open(entry: Entry): Promise<Client> {
    try {
      entry.releaseSlot = await this.connectionSlot(entry.target);
      if (entry.closed) throw new LookoutError('ssh_failed', `${describeTarget(entry.target)}: the connection was closed`, { details: { reason: 'closed' } });
      const client = await this.connect(entry.target);
      if (entry.closed) {
        client.end();
        throw new LookoutError('ssh_failed', `${describeTarget(entry.target)}: the connection was closed`, { details: { reason: 'closed' } });
      }
      entry.client = client;
      client.on('close', () => this.close(entry));
      return client;
    } catch (err) {
      this.close(entry);
      throw err;
    }
  }

  private async connectionSlot(target: SshTarget): Promise<ReleaseSlot> {
    if (this.slots.active >= this.limits.maxConnections) this.evictIdle();
    const slot = this.slots.admit(AbortSignal.timeout(this.limits.waitMs));
    const busy = (why: string) =>
      new LookoutError('ssh_failed', `${describeTarget(target)}: ${why}; retry later`, {
        details: { reason: 'busy', max_connections: this.limits.maxConnections, max_waiting: this.limits.maxWaiting },
      });
    if (!slot) throw busy(`all ${this.limits.maxConnections} SSH connections are in use and ${this.slots.waiting} callers wait`);
    try {
      return await slot;
    } catch {
      throw busy(`no SSH connection came free within ${this.limits.waitMs} ms`);
    }
  }

  private async channel(entry: Entry, signal: AbortSignal | undefined): Promise<ReleaseSlot> {
    const slot = entry.channels.admit(signal);
    if (!slot) {
      throw new LookoutError(
        'ssh_failed',
        `${describeTarget(entry.target)}: ${entry.channels.active} SSH operations run and ${entry.channels.waiting} wait (the most it takes); retry later`,
        { details: { reason: 'busy', channels: this.limits.channelsPerConnection, max_waiting: this.limits.maxWaiting } },
      );
    }
    clearTimeout(entry.idleTimer);
    try {
      return await slot;
    } catch {
      throw abortError(signal!, describeTarget(entry.target));
    }
  }

  private afterUse(entry: Entry): void {
    if (entry.closed || !entry.channels.idle) return;
    // Someone waits for a connection slot: this idle one makes room at once.
    if (this.slots.waiting > 0) return this.close(entry);
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => this.close(entry), this.limits.idleMs);
    entry.idleTimer.unref();
  }

  private evictIdle(): void {
    for (const entry of this.entries.values()) {
      if (entry.client && entry.channels.idle) return this.close(entry);
    }
  }

  private close(entry: Entry): void {
    if (entry.closed) return;
    entry.closed = true;
    clearTimeout(entry.idleTimer);
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    entry.releaseSlot?.();
    entry.client?.end();
  }
}

/** A failure of the connection rather than of the operation: a channel that would not open, or a connection that closed under it. */
/** Channel requests refused on a live connection before the operation gives up (or reconnects). */
const CHANNEL_RETRIES = 3;

function isChannelRefused(err: unknown): boolean {
  return isLookoutError(err, 'ssh_failed') && (err.details as { reason?: string } | undefined)?.reason === 'channel';
}

function isStale(err: unknown, entry: Entry): boolean {
  if (!isLookoutError(err, 'ssh_failed')) return false;
  const reason = (err.details as { reason?: string } | undefined)?.reason;
  return reason === 'channel' || (entry.closed && reason !== 'busy' && reason !== 'cancelled' && reason !== 'protocol');
}

/** The device broke the SSH or SFTP protocol on the connection (a malformed packet): no retry, and the connection goes. */
function isBroken(err: unknown): boolean {
  return isLookoutError(err, 'ssh_failed') && (err.details as { reason?: string } | undefined)?.reason === 'protocol';
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal, what));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, what));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
