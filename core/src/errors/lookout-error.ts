import { ERROR_CODES, type ErrorCode } from './codes.js';

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

/** A failure with a code from the one table; a lower error is kept as `cause`. */
export class LookoutError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;

  constructor(code: ErrorCode, message?: string, options: { details?: unknown; cause?: unknown } = {}) {
    super(message ?? ERROR_CODES[code].message, { cause: options.cause });
    this.name = 'LookoutError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.details = options.details;
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

export function isLookoutError(value: unknown, code?: ErrorCode): value is LookoutError {
  return value instanceof LookoutError && (code === undefined || value.code === code);
}

/** Any thrown value as a LookoutError (unknown failures become `internal`, the original kept as cause). */
export function toLookoutError(value: unknown): LookoutError {
  if (value instanceof LookoutError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new LookoutError('internal', message, { cause: value });
}
