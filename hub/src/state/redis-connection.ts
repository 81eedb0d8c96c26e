import { Redis } from 'ioredis';
import type { Logger } from 'lookout/core';

/** Key prefix of everything the hub keeps in Redis; replicas of one fleet share it (`--state-prefix`). */
export const DEFAULT_REDIS_PREFIX = 'lookout:';

export interface RedisConnectionOptions {
  /** `redis://[user:pass@]host:port[/db]` or `rediss://…`. */
  url: string;
  prefix?: string;
  logger: Logger;
  /** Upper bound of the reconnect backoff. Default 2 000 ms. */
  maxBackoffMs?: number;
}

/**
 * One Redis connection and whether it is usable now. Commands fail at once while Redis is down
 * (no offline queue): the callers answer from their local copies, marked stale, instead of waiting.
 * ioredis reconnects with a bounded backoff; `onUp` listeners run after each reconnect (catch-up).
 */
export class RedisConnection {
  readonly client: Redis;
  readonly prefix: string;
  private upListeners = new Set<() => void>();
  private downSince: number | undefined;
  private everUp = false;
  private lastError: string | undefined;
  private closing = false;

  constructor(private readonly options: RedisConnectionOptions) {
    this.prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
    this.client = redisClient(options.url, options.maxBackoffMs ?? 2_000);
    this.downSince = Date.now();
    this.client.on('ready', () => {
      if (this.everUp) options.logger.info({ url: redisUrlForLog(options.url) }, 'redis is back: catching up');
      this.everUp = true;
      this.downSince = undefined;
      for (const l of this.upListeners) l();
    });
    // ioredis reports every failed reconnect as an error: the outage is logged once, when the connection goes.
    this.client.on('error', (err: Error) => {
      this.lastError = err.message;
    });
    this.client.on('close', () => {
      if (this.downSince !== undefined || this.closing) return;
      this.downSince = Date.now();
      options.logger.warn({ url: redisUrlForLog(options.url), err: this.lastError }, 'redis connection lost: answering from local copies until it returns');
    });
  }

  /** A second connection to the same server (a blocking XREAD holds its connection). */
  duplicate(): Redis {
    return redisClient(this.options.url, this.options.maxBackoffMs ?? 2_000);
  }

  get up(): boolean {
    return this.client.status === 'ready';
  }

  /** Since when Redis is unreachable (epoch ms); undefined while up. */
  get unreachableSince(): number | undefined {
    return this.up ? undefined : this.downSince;
  }

  onUp(listener: () => void): () => void {
    this.upListeners.add(listener);
    return () => this.upListeners.delete(listener);
  }

  /** Waits for the first connection: start-up refuses a Redis it cannot reach (the first failure, or none within `timeoutMs`). */
  async ready(timeoutMs = 5_000): Promise<void> {
    if (this.up) return;
    await new Promise<void>((resolve, reject) => {
      const fail = (why: string): void => {
        clearTimeout(timer);
        off();
        this.client.off('error', onError);
        reject(new Error(`redis ${redisUrlForLog(this.options.url)} not reachable: ${why}`));
      };
      const onError = (err: Error): void => fail(err.message);
      const timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs);
      const off = this.onUp(() => {
        clearTimeout(timer);
        off();
        this.client.off('error', onError);
        resolve();
      });
      this.client.once('error', onError);
    });
  }

  key(...parts: string[]): string {
    return this.prefix + parts.join(':');
  }

  async close(): Promise<void> {
    this.closing = true;
    this.upListeners.clear();
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

function redisClient(url: string, maxBackoffMs: number): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    enableAutoPipelining: true,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 10), maxBackoffMs),
  });
}

/** The URL without its password, for logs and answers. */
export function redisUrlForLog(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.username = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return 'redis://(unparsable url)';
  }
}
