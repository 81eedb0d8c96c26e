import type { Logger, Plugin } from 'lookout/core';

/** The builder's port when none is given (the hub is 8788; the spec leaves the builder's open). */
export const DEFAULT_BUILDER_PORT = 8790;
/** JSON bodies of the builder's routes are small: imports name their dataset by URI. */
export const DEFAULT_BUILDER_BODY_LIMIT_BYTES = 1024 * 1024;

export interface BuilderOptions {
  port?: number;
  /** Default 127.0.0.1, or 0.0.0.0 with a token. */
  host?: string;
  /** Bearer token every route but /api/health needs; required to listen beyond loopback. */
  token?: string;
  /** Where the SQLite file and imports live (default .lookout-dev/builder). */
  dataDir?: string;
  bodyLimitBytes?: number;
  /** Plugin config keys (LOOKOUT_BUILDER_*), over the process environment. */
  env?: Record<string, string | undefined>;
  logger?: Logger;
  /** Instead of the builder's own plugin set (tests). */
  plugins?: Plugin[];
}
