import { posix } from 'node:path';
import type { Client } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { shellQuote } from 'lookout/lib/ssh';
import type { OpContext } from './sftp-ops.js';
import { commandFailed, execOnChannel } from './exec-channel.js';
import type { LogTailRequest, LogTailResult } from './service.js';

/** A log file's name: one plain name in the logs folder, never a path. */
const LOG_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Exit codes of the tail command that name a cause. */
const EXIT_NO_DIR = 3;
const EXIT_NO_FILE = 4;
/** Written to stderr once the file is found: the caller's answer may start. */
const START_MARK = 'lookout-tail-start';

/** Refuses a file name that is not one plain name, and a folder that is not a plain absolute path, before any connection. */
export function checkLogRequest(r: LogTailRequest): { dir: string; file: string } {
  if (typeof r.file !== 'string' || !LOG_FILE_NAME.test(r.file)) {
    throw new LookoutError('bad_request', 'file: one log file name (letters, digits, . _ -), not a path', { details: { field: 'file' } });
  }
  const dir = posix.normalize(r.dir);
  if (!posix.isAbsolute(r.dir) || /[\0\n\r]/.test(r.dir) || r.dir.split('/').includes('..') || dir === '/') {
    throw new LookoutError('bad_request', `logs folder ${JSON.stringify(r.dir)} is not an absolute directory path`, { details: { field: 'dir' } });
  }
  for (const [field, v, max] of [
    ['lines', r.lines, 100_000],
    ['maxBytes', r.maxBytes, 64 * 1024 * 1024],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 1 || v > max)
      throw new LookoutError('argument_invalid', `${field}: an integer from 1 to ${max}`, { details: { field } });
  }
  return { dir: dir.replace(/\/+$/, ''), file: r.file };
}

/**
 * The fixed command: the file's last `lines` lines (at most `maxBytes` of them), then with follow
 * what is appended, by name (a rotated file is followed to its successor). Exit 3: no folder; 4: no file.
 */
export function tailCommand(dir: string, file: string, lines: number, maxBytes: number, follow: boolean): string {
  const f = shellQuote(file);
  return [
    `cd -- ${shellQuote(dir)} 2>/dev/null || exit ${EXIT_NO_DIR}`,
    `[ -f ${f} ] || exit ${EXIT_NO_FILE}`,
    `echo ${START_MARK} >&2`,
    follow ? `exec tail -n ${lines} -F -- ${f} 2>/dev/null` : `tail -n ${lines} -- ${f} | tail -c ${maxBytes}`,
  ].join('; ');
}

/**
 * Runs the tail on an exec channel, handing output to `onData` as it comes, at most `maxBytes` in all
 * (then the channel is closed: truncated). A follow ends when `followMs` has passed or the caller
 * aborts; either way the channel is closed, so no tail keeps running on the device.
 */
export async function execTail(client: Client, request: LogTailRequest, ctx: OpContext, onData: (chunk: Buffer) => void): Promise<LogTailResult> {
  const { dir, file } = checkLogRequest(request);
  const follow = request.followMs !== undefined;
  const what = `${ctx.where}: tail ${dir}/${file}`;
  let bytes = 0;
  let truncated = false;
  let ended = false;
  let startSeen = false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const end = await execOnChannel(client, tailCommand(dir, file, request.lines, request.maxBytes, follow), ctx, {
      what,
      // A follow is silent while nothing is written: only its own duration ends it.
      ...(follow ? { idleTimeoutMs: request.followMs! + ctx.idleTimeoutMs } : {}),
      onOpen: (close) => {
        if (!follow) return;
        timer = setTimeout(() => {
          ended = true;
          close();
        }, request.followMs);
      },
      onData: (d, close) => {
        if (truncated) return;
        const room = request.maxBytes - bytes;
        const part = d.length > room ? d.subarray(0, room) : d;
        bytes += part.length;
        if (part.length > 0) onData(part);
        if (d.length > room) {
          truncated = true;
          close();
        }
      },
      onStderr: (tail) => {
        if (startSeen || !tail.includes(START_MARK)) return;
        startSeen = true;
        request.onStart?.();
      },
    });
    if (truncated || ended || (follow && end.exitCode === null)) return { bytes, truncated };
    if (end.exitCode === EXIT_NO_DIR || end.exitCode === EXIT_NO_FILE) {
      throw new LookoutError('log_not_found', `${ctx.where}: no log ${end.exitCode === EXIT_NO_DIR ? `folder ${dir}` : `file ${file} in ${dir}`}`, {
        details: { dir, file },
      });
    }
    if (end.exitCode !== 0) throw commandFailed(what, end);
    return { bytes, truncated };
  } finally {
    clearTimeout(timer);
  }
}
