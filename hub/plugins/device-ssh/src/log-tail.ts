import { posix } from 'node:path';
import type { Client, ClientChannel } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { guarded } from 'lookout/lib/ssh';
import { shellQuote } from './shell-listing.js';
import type { OpContext } from './sftp-ops.js';
import type { LogTailRequest, LogTailResult } from './service.js';

/** A log file's name: one plain name in the logs folder, never a path. */
const LOG_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const STDERR_TAIL = 500;
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
export function execTail(client: Client, request: LogTailRequest, ctx: OpContext, onData: (chunk: Buffer) => void): Promise<LogTailResult> {
  const { dir, file } = checkLogRequest(request);
  const follow = request.followMs !== undefined;
  let channel: ClientChannel | undefined;
  const what = `${ctx.where}: tail ${dir}/${file}`;
  const closeChannel = (): void => {
    try {
      channel?.close();
      // A hung device never acknowledges the close: the channel's close event comes now.
      channel?.destroy();
    } catch {
      // Already closed.
    }
  };
  return guarded(
    // A follow is silent while nothing is written: only its own duration ends it.
    { what, idleTimeoutMs: follow ? request.followMs! + ctx.idleTimeoutMs : ctx.idleTimeoutMs, signal: ctx.signal, stop: closeChannel },
    (touch) =>
      new Promise<LogTailResult>((resolve, reject) => {
        let bytes = 0;
        let truncated = false;
        let ended = false;
        let stderr = '';
        let exitCode: number | null = null;
        let startSeen = false;
        let timer: NodeJS.Timeout | undefined;
        const open = (err: Error | undefined, stream: ClientChannel): void => {
          if (err) {
            const refused = /unable to exec/i.test(err.message);
            return reject(
              new LookoutError('ssh_failed', `${ctx.where}: ${refused ? 'the device refuses commands' : 'no exec channel'}: ${err.message}`, {
                details: { reason: refused ? 'exec_refused' : 'channel' },
              }),
            );
          }
          channel = stream;
          const onError = (e: Error): void => {
            reject(new LookoutError('ssh_failed', `${what}: the device broke the SSH channel protocol: ${e.message}`, { details: { reason: 'protocol' } }));
            closeChannel();
          };
          stream.on('error', onError);
          stream.stderr.on('error', onError);
          if (follow) {
            timer = setTimeout(() => {
              ended = true;
              closeChannel();
            }, request.followMs);
          }
          stream.on('data', (d: Buffer) => {
            touch();
            if (truncated) return;
            const room = request.maxBytes - bytes;
            const part = d.length > room ? d.subarray(0, room) : d;
            bytes += part.length;
            if (part.length > 0) onData(part);
            if (d.length > room) {
              truncated = true;
              closeChannel();
            }
          });
          stream.stderr.on('data', (d: Buffer) => {
            touch();
            stderr = (stderr + d.toString('utf8')).slice(-STDERR_TAIL);
            if (!startSeen && stderr.includes(START_MARK)) {
              startSeen = true;
              request.onStart?.();
            }
          });
          stream.on('exit', (code: number | null) => (exitCode = code));
          stream.on('close', () => {
            clearTimeout(timer);
            if (truncated || ended || (follow && exitCode === null)) return resolve({ bytes, truncated });
            if (exitCode === EXIT_NO_DIR || exitCode === EXIT_NO_FILE) {
              return reject(
                new LookoutError('log_not_found', `${ctx.where}: no log ${exitCode === EXIT_NO_DIR ? `folder ${dir}` : `file ${file} in ${dir}`}`, {
                  details: { dir, file },
                }),
              );
            }
            if (exitCode !== 0) {
              const said = stderr.trim().split('\n').pop()?.slice(0, 300) ?? '';
              return reject(
                new LookoutError('ssh_failed', `${what}: exited with ${exitCode ?? 'a signal'}${said ? `: ${said}` : ''}`, {
                  details: { reason: 'command', exit_code: exitCode },
                }),
              );
            }
            resolve({ bytes, truncated });
          });
        };
        try {
          client.exec(tailCommand(dir, file, request.lines, request.maxBytes, follow), open);
        } catch (err) {
          reject(new LookoutError('ssh_failed', `${ctx.where}: ${(err as Error).message}`, { details: { reason: 'channel' } }));
        }
      }),
  );
}
