import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * An SSE client for tests: fetch and eventsource-parser, as the console reads the stream. Events
 * are kept in order; `next` waits for the first one (from a position) that matches.
 */
export class SseReader {
  readonly events: EventSourceMessage[] = [];
  status = 0;
  headers: Headers | undefined;
  private readonly aborter = new AbortController();
  private waiters: (() => void)[] = [];
  done: Promise<void>;
  ended = false;

  constructor(url: string, headers: Record<string, string> = {}) {
    this.done = this.run(url, headers);
  }

  private async run(url: string, headers: Record<string, string>): Promise<void> {
    try {
      const res = await fetch(url, { headers, signal: this.aborter.signal });
      this.status = res.status;
      this.headers = res.headers;
      const parser = createParser({
        onEvent: (e) => {
          this.events.push(e);
          this.wake();
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      /* aborted, or the hub closed the stream */
    } finally {
      this.ended = true;
      this.wake();
    }
  }

  async opened(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.status === 0 && !this.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }

  /** The data (parsed) of the first event from `from` on whose name is `kind` and that passes `match`. */
  async next<T = any>(kind: string, match: (data: T) => boolean = () => true, timeoutMs = 5000, from = 0): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find((e) => e.event === kind && match(JSON.parse(e.data) as T));
      if (found) return JSON.parse(found.data) as T;
      if (this.ended) throw new Error(`the stream ended before a ${kind} event; got ${this.names()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${kind} event within ${timeoutMs} ms; got ${this.names()}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  names(): string {
    return this.events.map((e) => e.event).join(',') || 'nothing';
  }

  close(): Promise<void> {
    this.aborter.abort();
    return this.done;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}
