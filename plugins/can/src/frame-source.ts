import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseCandumpLine, type CanFrame } from './candump-line.js';

/** Where frames come from: the kernel through can-utils' candump, or a recorded candump log. */
export type FrameSourceKind = 'candump' | 'file';

export interface FrameSourceEvents {
  frame(frame: CanFrame): void;
  /** The source ended or cannot run, and why (said once per run; the plugin decides when to retry). */
  ended(reason: string): void;
}

export interface FrameSource {
  stop(): void;
}

/**
 * `candump -L <iface>`: Node has no PF_CAN socket, so can-utils' candump reads the SocketCAN raw
 * socket and writes each frame in its log format (kernel timestamp, interface, id#data) on stdout.
 * A missing binary, a missing interface or a kernel without CAN end it with candump's own words.
 */
export function candumpSource(program: string, iface: string, on: FrameSourceEvents): FrameSource {
  let child: ChildProcess | null = spawn(program, ['-L', iface], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let said = false;
  const end = (reason: string) => {
    if (said) return;
    said = true;
    on.ended(reason);
  };
  child.stderr!.on('data', (c: Buffer) => {
    // Only its last words matter; a chatty child must not grow our memory.
    stderr = (stderr + c.toString()).slice(-1000);
  });
  const lines = createInterface({ input: child.stdout!, crlfDelay: Infinity });
  lines.on('line', (line) => {
    const frame = parseCandumpLine(line);
    if (frame) on.frame(frame);
  });
  child.once('error', (err: NodeJS.ErrnoException) => {
    child = null;
    end(err.code === 'ENOENT' ? `${program} is not installed (Debian package can-utils)` : `${program} cannot run: ${err.message}`);
  });
  child.once('close', (code, signal) => {
    child = null;
    const words = stderr.trim().split('\n').pop();
    end(`${program} -L ${iface} ended (${signal ?? `exit ${code}`})${words ? `: ${words}` : ''}`);
  });
  return {
    stop() {
      said = true;
      lines.close();
      child?.kill('SIGTERM');
      child = null;
    },
  };
}

/**
 * A recorded candump log (`candump -L` output, `canplayer`'s input), read once from the start: the
 * frames are stamped with the time they are read, as canplayer sends them now, so that their
 * values are current and not judged stale by the recording's own clock.
 */
export function recordedSource(path: string, on: FrameSourceEvents): FrameSource {
  const stream = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let stopped = false;
  lines.on('line', (line) => {
    const frame = parseCandumpLine(line);
    if (frame && !stopped) on.frame({ ...frame, time: Date.now() / 1000 });
  });
  stream.once('error', (err) => {
    if (!stopped) on.ended(`the recorded candump log ${path} cannot be read: ${err.message}`);
    stopped = true;
  });
  lines.once('close', () => {
    if (!stopped) on.ended(`the recorded candump log ${path} is played to its end`);
    stopped = true;
  });
  return {
    stop() {
      stopped = true;
      lines.close();
      stream.destroy();
    },
  };
}
