import { PassThrough } from 'node:stream';
import { LookoutError, reply, toLookoutError } from 'lookout/core';
import type { DeviceSsh } from '../../device-ssh/src/service.js';
import type { SecretScrubber } from './secret-scrub.js';

export interface DeviceLogQuery {
  file: string;
  lines: number;
  max_bytes: number;
  follow: boolean;
  follow_s: number;
}

/** Splits a byte stream into whole lines (a line cut by a chunk waits for the rest). */
export class LineSplitter {
  private rest = '';
  push(chunk: Buffer): string[] {
    const text = this.rest + chunk.toString('utf8');
    const parts = text.split('\n');
    this.rest = parts.pop() ?? '';
    return parts.map((l) => l.replace(/\r$/, ''));
  }
  flush(): string[] {
    const last = this.rest;
    this.rest = '';
    return last.length > 0 ? [last] : [];
  }
}

/** The tail of a device's log file, whole, as JSON lines (every secret the hub knows taken out). */
export async function deviceLogTail(ssh: DeviceSsh, deviceId: string, dir: string, q: DeviceLogQuery, scrub: SecretScrubber, signal?: AbortSignal) {
  const split = new LineSplitter();
  const lines: string[] = [];
  const result = await ssh.tailLog(deviceId, { dir, file: q.file, lines: q.lines, maxBytes: q.max_bytes }, (c) => lines.push(...split.push(c)), signal);
  lines.push(...split.flush());
  scrub.refresh();
  return { device_id: deviceId, dir, file: q.file, lines: lines.map((l) => scrub.text(l)), bytes: result.bytes, truncated: result.truncated };
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * `follow=true`: Server-Sent Events, one `line` event per log line, then `end` (bytes, truncated,
 * why). The answer starts only once the device has the file (a missing one is a plain typed error);
 * a client that leaves aborts the tail, which closes its SSH channel.
 */
export async function deviceLogFollow(ssh: DeviceSsh, deviceId: string, dir: string, q: DeviceLogQuery, scrub: SecretScrubber, signal: AbortSignal) {
  scrub.refresh();
  const stream = new PassThrough();
  const split = new LineSplitter();
  const stop = new AbortController();
  const onLeave = () => stop.abort(new LookoutError('ssh_failed', 'the client left', { details: { reason: 'cancelled' } }));
  signal.addEventListener('abort', onLeave, { once: true });
  stream.on('close', onLeave);
  let seq = 0;
  const write = (l: string) => {
    if (!stream.writableEnded) stream.write(frame('line', { seq: ++seq, line: scrub.text(l) }));
  };
  let started: () => void = () => undefined;
  const startedP = new Promise<void>((r) => (started = r));
  const done = ssh
    .tailLog(
      deviceId,
      { dir, file: q.file, lines: q.lines, maxBytes: q.max_bytes, followMs: q.follow_s * 1000, onStart: () => started() },
      (c) => split.push(c).forEach(write),
      stop.signal,
    )
    .then(
      (r) => ({ ok: true as const, ...r }),
      (err: unknown) => ({ ok: false as const, error: toLookoutError(err) }),
    );
  const first = await Promise.race([startedP.then(() => undefined), done]);
  if (first && !first.ok) {
    signal.removeEventListener('abort', onLeave);
    throw first.error;
  }
  stream.write(`: following ${q.file} on ${deviceId}\n\n`);
  void done.then((r) => {
    signal.removeEventListener('abort', onLeave);
    split.flush().forEach(write);
    if (!stream.writableEnded) {
      stream.end(
        frame(
          'end',
          r.ok
            ? { bytes: r.bytes, truncated: r.truncated, reason: r.truncated ? 'max_bytes' : 'follow_s' }
            : { reason: 'error', error: { code: r.error.code, message: scrub.text(r.error.message) } },
        ),
      );
    }
  });
  return reply({
    status: 200,
    body: stream,
    type: 'text/event-stream; charset=utf-8',
    headers: { 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' },
  });
}
