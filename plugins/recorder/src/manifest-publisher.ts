import { DataManifestCommandSchema, type DataManifestCommand } from 'lookout/core/contracts';
import { toLookoutError, z, type Logger, type PluginBus } from 'lookout/core';
import type { ChunkIndex } from './chunk-index.js';

/** data_manifest requests answered per second; a flood beyond is dropped (logged), not queued. */
const MANIFEST_REQUESTS_PER_S = 10;

export interface ManifestPublisherOptions {
  bus: PluginBus;
  index: ChunkIndex;
  /** DATA_MANIFEST_CHUNKS: chunks in a data_manifest unless a request asks for fewer or more. */
  chunks: number;
  log: Logger;
}

/** `data_manifest` on the bus: at connect ("boot", then "reconnect"), after each chunk, and on `cmd/data_manifest`. */
export class ManifestPublisher {
  private requestWindow = { startMs: 0, count: 0 };
  private connects = 0;

  constructor(private readonly o: ManifestPublisherOptions) {}

  /** Publishes at each connect and answers the requests. */
  async listen(): Promise<void> {
    this.o.bus.onConnect(() => void this.publish(this.connects++ === 0 ? 'boot' : 'reconnect'));
    await this.o.bus.subscribe('cmd/data_manifest', (_topic, payload, meta) => this.request(payload, meta));
  }

  /** The newest chunks, newest first; never throws (a failed publish is logged). */
  async publish(reason: string, command: DataManifestCommand = {}): Promise<void> {
    const { bus, index, log } = this.o;
    if (!bus.connected) return;
    const chunks = index
      .all()
      .slice(-(command.limit ?? this.o.chunks))
      .reverse();
    try {
      await bus.publish('data_manifest', {
        timestamp: new Date().toISOString(),
        chunks,
        total_chunks: index.size,
        reason,
        ...(command.request_id ? { request_id: command.request_id } : {}),
      });
    } catch (err) {
      log.warn({ code: toLookoutError(err).code }, `data_manifest not published: ${(err as Error).message}`);
    }
  }

  private request(payload: Buffer, meta: { retain: boolean }): void {
    if (meta.retain) return; // a retained command would run again at every resubscribe
    const now = Date.now();
    if (now - this.requestWindow.startMs >= 1000) this.requestWindow = { startMs: now, count: 0 };
    if (++this.requestWindow.count > MANIFEST_REQUESTS_PER_S) return;
    let body: unknown;
    try {
      body = JSON.parse(payload.toString('utf8'));
    } catch {
      this.o.log.warn('cmd/data_manifest ignored: payload is not JSON');
      return;
    }
    const parsed = DataManifestCommandSchema.safeParse(body);
    if (!parsed.success) {
      this.o.log.warn(`cmd/data_manifest ignored: ${z.prettifyError(parsed.error)}`);
      return;
    }
    void this.publish('request', parsed.data);
  }
}
