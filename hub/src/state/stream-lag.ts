import type { RedisConnection } from './redis-connection.js';

/** How often a replica measures how far behind the stream's end it reads. */
export const STREAM_LAG_SAMPLE_MS = 1000;

/**
 * The first entry after ARGV[1] (the reader's cursor) and the stream's newest, ids only (the
 * entries' batches stay in Redis); nothing when nothing is unread. KEYS: the stream.
 */
const UNREAD_AND_NEWEST = `
local unread = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+', 'COUNT', 1)
if #unread == 0 then return false end
local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
return {unread[1][1], newest[1][1]}
`;

/**
 * How far behind the stream's end a replica reads, in the stream's own time (its ids are Redis's
 * clock, so no clock of a replica's host enters): the newest entry's time less that of the oldest
 * entry this replica has not read yet, 0 when it has read everything. Sampled every
 * STREAM_LAG_SAMPLE_MS, so a figure is up to that old; null before the first sample and while Redis
 * is away (the replica says stale then).
 */
export class StreamLag {
  private lagMs: number | null = null;
  private readonly timer: NodeJS.Timeout;
  private sampling = false;

  constructor(
    private readonly redis: RedisConnection,
    private readonly streamKey: string,
    private readonly cursor: () => string,
    intervalMs = STREAM_LAG_SAMPLE_MS,
  ) {
    this.timer = setInterval(() => void this.sample(), intervalMs);
    this.timer.unref();
  }

  get ms(): number | null {
    return this.redis.up ? this.lagMs : null;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    if (this.sampling || !this.redis.up) return;
    this.sampling = true;
    try {
      const ids = (await this.redis.client.eval(UNREAD_AND_NEWEST, 1, this.streamKey, this.cursor())) as [string, string] | null;
      this.lagMs = ids ? Math.max(0, idMs(ids[1]) - idMs(ids[0])) : 0;
    } catch {
      this.lagMs = null;
    } finally {
      this.sampling = false;
    }
  }
}

function idMs(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}
