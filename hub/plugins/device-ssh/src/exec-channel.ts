import type { Client, ClientChannel } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { guarded } from 'lookout/lib/ssh';
import type { OpContext } from './sftp-ops.js';

/** How much of a command's stderr is kept for its error message. */
const STDERR_TAIL = 500;

/** How a fixed command's channel ended: its exit code (null: killed by a signal, or closed before it exited) and the last of its stderr. */
export interface ChannelEnd {
  exitCode: number | null;
  stderr: string;
}

export interface ExecOptions {
  /** For messages: `cam-1 (root@127.0.0.1:22): list /data/recordings`. */
  what: string;
  /** Longest silence; the context's unless a command is silent by design (a follow). */
  idleTimeoutMs?: number;
  /** Once the channel is open, with `close` (which ends it, and so the command on the device). */
  onOpen?: (close: () => void) => void;
  /** stdout as it comes. */
  onData: (chunk: Buffer, close: () => void) => void;
  /** The stderr tail each time more of it comes. */
  onStderr?: (tail: string) => void;
}

/**
 * Runs one fixed command on an exec channel under the op guard (inactivity timeout, the caller's
 * abort: the channel is closed), resolving with how it ended once the channel closes. The caller
 * reads the exit code: what it means is the command's.
 */
export function execOnChannel(client: Client, command: string, ctx: OpContext, o: ExecOptions): Promise<ChannelEnd> {
  let channel: ClientChannel | undefined;
  const close = (): void => {
    try {
      channel?.close();
      // A hung device never acknowledges the close: the channel's close event comes now.
      channel?.destroy();
    } catch {
      // Already closed.
    }
  };
  return guarded({ what: o.what, idleTimeoutMs: o.idleTimeoutMs ?? ctx.idleTimeoutMs, signal: ctx.signal, stop: close }, (touch) => {
    return new Promise<ChannelEnd>((resolve, reject) => {
      const open = (err: Error | undefined, stream: ClientChannel): void => {
        if (err) {
          // A refused exec is the device's policy (no shell for us), not a dead connection.
          const refused = /unable to exec/i.test(err.message);
          return reject(
            new LookoutError('ssh_failed', `${ctx.where}: ${refused ? 'the device refuses commands' : 'no exec channel'}: ${err.message}`, {
              details: { reason: refused ? 'exec_refused' : 'channel' },
            }),
          );
        }
        channel = stream;
        // ssh2 leaves 'error' on the channel unheard: a device that breaks the channel protocol (data
        // after its EOF) would otherwise throw inside ssh2's parser. Heard for the channel's life.
        const onError = (e: Error): void => {
          reject(new LookoutError('ssh_failed', `${o.what}: the device broke the SSH channel protocol: ${e.message}`, { details: { reason: 'protocol' } }));
          close();
        };
        stream.on('error', onError);
        stream.stderr.on('error', onError);
        let stderr = '';
        let exitCode: number | null = null;
        o.onOpen?.(close);
        stream.on('data', (d: Buffer) => {
          touch();
          o.onData(d, close);
        });
        stream.stderr.on('data', (d: Buffer) => {
          touch();
          stderr = (stderr + d.toString('utf8')).slice(-STDERR_TAIL);
          o.onStderr?.(stderr);
        });
        stream.on('exit', (code: number | null) => (exitCode = code));
        stream.on('close', () => resolve({ exitCode, stderr }));
      };
      try {
        client.exec(command, open);
      } catch (err) {
        reject(new LookoutError('ssh_failed', `${ctx.where}: ${(err as Error).message}`, { details: { reason: 'channel' } }));
      }
    });
  });
}

/** The error of a command that exited other than 0: its code and the last line of its stderr. */
export function commandFailed(what: string, end: ChannelEnd): LookoutError {
  const said = end.stderr.trim().split('\n').pop()?.slice(0, 300) ?? '';
  return new LookoutError('ssh_failed', `${what}: exited with ${end.exitCode ?? 'a signal'}${said ? `: ${said}` : ''}`, {
    details: { reason: 'command', exit_code: end.exitCode },
  });
}
