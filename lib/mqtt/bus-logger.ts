import type { Logger } from 'lookout/core';

/** The part of a pino logger the bus uses, so callers may pass a child logger or a test sink. */
export type BusLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/** Libraries stay quiet unless given a logger. */
export const silentBusLogger: BusLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** An MQTT URL for logs: credentials embedded in it (`mqtt://user:pass@host`) never reach a log. */
export function urlForLog(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '[unparsable url]';
  }
}
