import { readFileSync } from 'node:fs';

/** Used when the limit cannot be read (no /proc): the common soft limit. */
const FALLBACK_DESCRIPTOR_LIMIT = 1024;
/** Descriptors never given to broker sockets: the HTTP side, state files, plugins, the process itself. */
const MIN_RESERVE = 256;
const MAX_RESERVE = 8192;

/**
 * The process's limit on open file descriptors (the soft RLIMIT_NOFILE), read from /proc/self/limits.
 * Node has no getrlimit; at start it raises the soft limit to the hard one, so this reads the limit
 * in force, whatever `ulimit -Sn` the shell had. Undefined where it cannot be read (not Linux) or is unlimited.
 */
export function descriptorLimit(procLimits = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(procLimits, 'utf8');
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\d+)/m.exec(text)?.[1];
  return soft === undefined ? undefined : Number(soft);
}

/**
 * How many connections the broker may hold in all: the descriptor limit less a reserve (a quarter of
 * it, 256 to 8192), so that a flood of broker sockets never takes the descriptors the hub's HTTP
 * side and state writes need (GET /health keeps answering, a state write gets no EMFILE).
 */
export function brokerConnectionBudget(limit = descriptorLimit() ?? FALLBACK_DESCRIPTOR_LIMIT): number {
  const reserve = Math.min(Math.max(Math.ceil(limit / 4), MIN_RESERVE), MAX_RESERVE, Math.floor(limit / 2));
  return Math.max(1, limit - reserve);
}
