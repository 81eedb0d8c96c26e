import { spawn } from 'node:child_process';
import { LookoutError } from 'lookout/core';

export interface FfmpegRun {
  /** Bytes written to ffmpeg's standard input, then closed. */
  input?: Uint8Array;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Standard output beyond this is a failure (a bound on what a caller holds in memory). */
  maxOutputBytes?: number;
  /** The program; `ffprobe` for probes. */
  program?: 'ffmpeg' | 'ffprobe';
}

/** What ffmpeg said last (its errors are at the end of standard error), bounded. */
const STDERR_TAIL = 2000;

/**
 * Runs ffmpeg (or ffprobe) to completion and returns its standard output. A non-zero exit, a
 * timeout or too much output rejects with `code` and the tail of ffmpeg's own message; the process
 * is killed on timeout and on abort, so no ffmpeg outlives its caller.
 */
export function runFfmpeg(
  args: readonly string[],
  run: FfmpegRun,
  code: 'transcode_failed' | 'recording_unreadable' | 'live_stream_unavailable' = 'transcode_failed',
): Promise<Buffer> {
  const program = run.program ?? 'ffmpeg';
  const fullArgs = program === 'ffmpeg' ? ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args] : ['-v', 'error', ...args];
  if (run.signal?.aborted) return Promise.reject(new LookoutError(code, `${program} cancelled`, { details: { program } }));
  return new Promise((resolve, reject) => {
    const child = spawn(program, fullArgs, { stdio: [run.input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let failure: LookoutError | undefined;
    const fail = (message: string) => {
      failure ??= new LookoutError(code, message, { details: { program } });
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => fail(`${program} did not finish within ${run.timeoutMs} ms`), run.timeoutMs);
    const onAbort = () => fail(`${program} cancelled`);
    run.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (run.maxOutputBytes !== undefined && outBytes > run.maxOutputBytes) fail(`${program} wrote more than ${run.maxOutputBytes} bytes`);
      else out.push(d);
    });
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.on('error', (err) => fail(`${program} could not run: ${err.message}`));
    child.on('close', (status) => {
      clearTimeout(timer);
      run.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      if (status !== 0)
        return reject(new LookoutError(code, `${program} exited with ${status}: ${lastLine(stderr)}`, { details: { program, exit_code: status } }));
      resolve(Buffer.concat(out, outBytes));
    });
    if (run.input && child.stdin) {
      child.stdin.on('error', () => undefined); // ffmpeg may stop reading early (it has its frame); its exit says how it went
      child.stdin.end(run.input);
    }
  });
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300) || 'no message';
}
