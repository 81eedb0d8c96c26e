import { errorInfo, type AnyErrorCode } from './error-table.js';

/** The JSON body of every error answer: `{ error: { code, message, details? } }`. */
export interface ErrorBody {
  error: { code: AnyErrorCode; message: string; details?: unknown };
}

/**
 * A failure with a code from the one table (the core's codes, or a plugin's declared
 * `<plugin>.<code>`); a lower error is kept as `cause`. An undeclared plugin code answers 500.
 */
export class LookoutError extends Error {
  readonly code: AnyErrorCode;
  readonly status: number;
  readonly details?: unknown;

  constructor(code: AnyErrorCode, message?: string, options: { details?: unknown; cause?: unknown } = {}) {
    const info = errorInfo(code);
    super(message ?? info?.message ?? code, { cause: options.cause });
    this.name = 'LookoutError';
    this.code = code;
    this.status = info?.status ?? 500;
    this.details = options.details;
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

/** True when `value` is a LookoutError, with the given code when one is given. */
export function isLookoutError(value: unknown, code?: AnyErrorCode): value is LookoutError {
  return value instanceof LookoutError && (code === undefined || value.code === code);
}

/** Any thrown value as a LookoutError (unknown failures become `internal`, the original kept as cause). */
export function toLookoutError(value: unknown): LookoutError {
  if (value instanceof LookoutError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new LookoutError('internal', message, { cause: value });
}
