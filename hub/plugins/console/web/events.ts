import { createParser } from 'eventsource-parser';
import { hubFetch } from './api.js';

export type ConnectionState = 'connecting' | 'live' | 'reconnecting';

export interface EventStreamOptions {
  /** `/fleet/events?…` */
  path: string;
  onEvent(name: string, data: unknown): void;
  onState(state: ConnectionState, detail?: string): void;
}

/**
 * GET /fleet/events read with fetch rather than EventSource: EventSource cannot send the
 * Authorization header, and the token must not go into the URL. The stream reconnects by itself
 * (the hub's `retry`, doubling up to 15 s while it fails) and says when it is not live.
 */
export function openEventStream(o: EventStreamOptions): () => void {
  let stopped = false;
  let controller: AbortController | undefined;
  let retryMs = 2000;
  let failures = 0;

  let wake: (() => void) | undefined;
  // The browser says the network is gone: the stream cannot be live, whatever the socket says yet.
  const onOffline = () => controller?.abort();
  const onOnline = () => wake?.();
  addEventListener('offline', onOffline);
  addEventListener('online', onOnline);

  const run = async (): Promise<void> => {
    while (!stopped) {
      controller = new AbortController();
      o.onState(failures === 0 ? 'connecting' : 'reconnecting');
      try {
        const res = await hubFetch(o.path, { signal: controller.signal, headers: { accept: 'text/event-stream' } });
        if (!res.ok || !res.body) throw new Error(`the hub answered ${res.status}`);
        const parser = createParser({
          onEvent: (e) => {
            try {
              o.onEvent(e.event ?? 'message', JSON.parse(e.data));
            } catch (err) {
              console.warn('bad event', err);
            }
          },
          onRetry: (ms) => (retryMs = ms),
          onComment: () => {
            // The first bytes (`: connected`) mean live.
            if (failures !== 0 || !live) setLive();
          },
        });
        let live = false;
        const setLive = () => {
          live = true;
          failures = 0;
          o.onState('live');
        };
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
        throw new Error('the hub ended the event stream');
      } catch (err) {
        if (stopped) return;
        failures++;
        o.onState('reconnecting', err instanceof Error ? err.message : String(err));
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(15_000, retryMs * 2 ** Math.min(failures - 1, 3)));
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        wake = undefined;
      }
    }
  };
  void run();
  return () => {
    stopped = true;
    removeEventListener('offline', onOffline);
    removeEventListener('online', onOnline);
    controller?.abort();
    wake?.();
  };
}
