import { PassThrough } from 'node:stream';
import type { FleetEventKind } from './event-kinds.js';

export interface SseClientOptions {
  kinds: ReadonlySet<FleetEventKind>;
  device: string | undefined;
  /** Bytes it may have unread before it is cut off (a slow reader must not grow the hub's memory). */
  maxBufferBytes: number;
  retryMs: number;
  onClose: () => void;
}

/**
 * One `text/event-stream` answer: the events it asked for, written as they come. A client that
 * reads slower than events arrive is ended; it reconnects on its own (EventSource does, and the
 * console does) and reads the state again.
 */
export class SseClient {
  readonly stream = new PassThrough();
  private closed = false;
  slowDropped = false;

  constructor(private readonly o: SseClientOptions) {
    this.stream.on('close', () => this.close());
    this.stream.on('error', () => this.close());
    // The first bytes go out at once: headers and `retry` reach the client before any event.
    this.stream.write(`retry: ${o.retryMs}\n: connected\n\n`);
  }

  wants(kind: FleetEventKind, deviceId: string | null): boolean {
    if (this.closed || !this.o.kinds.has(kind)) return false;
    return this.o.device === undefined || deviceId === null || deviceId === this.o.device;
  }

  /** Writes an already framed event (framed once for every client). */
  write(frame: string): void {
    if (this.closed) return;
    if (this.stream.readableLength + this.stream.writableLength > this.o.maxBufferBytes) {
      this.slowDropped = true;
      this.end();
      return;
    }
    this.stream.write(frame);
  }

  heartbeat(): void {
    if (!this.closed) this.stream.write(': keep-alive\n\n');
  }

  end(): void {
    if (this.closed) return;
    this.stream.end();
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.o.onClose();
  }
}

/** An SSE frame: `id`, `event` and the JSON on one `data` line (JSON.stringify never writes a newline). */
export function frameOf(id: number, kind: string, data: unknown): string {
  return `id: ${id}\nevent: ${kind}\ndata: ${JSON.stringify(data)}\n\n`;
}
