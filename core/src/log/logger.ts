import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';
import type { LogRing } from './log-ring.js';

export type { Logger };

/**
 * Key names whose values never reach a log: device passwords, HMAC keys, tokens, private keys.
 * pino's redaction works on paths, so the common nestings are listed; `redactSecrets` below covers
 * values that callers put into free-form objects.
 */
const SECRET_KEYS = [
  'password',
  'passwd',
  'pass',
  'secret',
  'token',
  'accessToken',
  'access_token',
  'authorization',
  'Authorization',
  'apiKey',
  'api_key',
  'hmacKey',
  'hmac_key',
  'key',
  'privateKey',
  'private_key',
  'DEVICE_PASSWORD',
  'COMPILE_SERVICE_TOKEN',
  'LOOKOUT_TOKEN',
  'MESH_HMAC_KEY',
  'MESH_KEY',
  'meshKey',
  'mesh_key',
  'A2A_HMAC_KEY',
];
const REDACT_PATHS = SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `headers.${k.toLowerCase()}`]);

export const REDACTED = '[redacted]';

export interface LoggerSettings {
  level?: string;
  name?: string;
  destination?: DestinationStream;
  /** Also keep every line written in this bounded ring (the hub's GET /debug/log/tail), after redaction. */
  ring?: LogRing;
}

/** A pino logger that redacts secrets by key name; the level defaults to LOOKOUT_LOG_LEVEL, else `info`. */
export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? process.env.LOOKOUT_LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: REDACTED },
  };
  if (settings.name) options.name = settings.name;
  if (settings.ring) {
    // Each stream takes every line the logger's own level lets through.
    const main = settings.destination ?? pino.destination(1);
    return pino(
      options,
      pino.multistream([
        { stream: main, level: 'trace' },
        { stream: settings.ring, level: 'trace' },
      ]),
    );
  }
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

const SECRET_KEY_PATTERN = new RegExp(`^(${SECRET_KEYS.join('|')})$`, 'i');
const SECRET_VALUE_PATTERN = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g;

/** A deep copy of `value` with secret-named keys and PEM private keys replaced, for answers and exports. */
export function redactSecrets<T>(value: T): T {
  return redactValue(value, new WeakSet()) as T;
}

function redactValue(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return value.replace(SECRET_VALUE_PATTERN, REDACTED);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, seen));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY_PATTERN.test(k) ? REDACTED : redactValue(v, seen);
  return out;
}
