import type { Client } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { guarded } from 'lookout/lib/ssh';
import { isRecordingFileName } from './recording-names.js';
import type { RemoteFile } from './service.js';
import type { OpContext } from './sftp-ops.js';

/** A listing of tens of thousands of chunks fits; a device writing more is cut off. */
const MAX_LISTING_BYTES = 8 * 1024 * 1024;
const STDERR_TAIL = 500;

/** A string as one single-quoted shell word. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The fixed listing command; its one argument is the recordings root, quoted. GNU find prints name,
 * size and mtime per regular file (symlinks excluded); where find has no -printf (BusyBox), stat
 * does it per file. Exit 3: the root is missing.
 */
export function listingCommand(root: string): string {
  const q = shellQuote(root);
  return [
    `cd -- ${q} 2>/dev/null || exit 3`,
    `if find . -maxdepth 0 -printf '' >/dev/null 2>&1; then exec find . -maxdepth 1 -type f -printf '%f\\t%s\\t%T@\\n'; fi`,
    `for f in * .h265_status; do if [ -f "$f" ] && [ ! -L "$f" ]; then stat -c '%n\t%s\t%Y' -- "$f"; fi; done`,
    'exit 0',
  ].join('; ');
}

/** Lines of `name<TAB>size<TAB>mtime seconds`; names that are not recording files are dropped. */
export function parseListing(text: string): RemoteFile[] {
  const files: RemoteFile[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split('\t');
    if (fields.length < 3) continue;
    const mtime = Number(fields.pop());
    const size = Number(fields.pop());
    const name = fields.join('\t').replace(/^\.\//, '');
    if (!isRecordingFileName(name) || !Number.isSafeInteger(size) || size < 0 || !Number.isFinite(mtime)) continue;
    files.push({ name, size, mtimeMs: Math.round(mtime * 1000) });
  }
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Lists the recordings root with a shell command (for devices without SFTP). */
export function shellList(client: Client, root: string, ctx: OpContext): Promise<RemoteFile[]> {
  let channel: { close(): void; destroy(): void } | undefined;
  return guarded(
    {
      what: `${ctx.where}: list ${root}`,
      idleTimeoutMs: ctx.idleTimeoutMs,
      signal: ctx.signal,
      stop: () => {
        channel?.close();
        // A hung device never acknowledges the close: the channel's close event comes now.
        channel?.destroy();
      },
    },
    (touch) => {
      return new Promise<RemoteFile[]>((resolve, reject) => {
        const open = (err: Error | undefined, stream: import('ssh2').ClientChannel) => {
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
            reject(
              new LookoutError('ssh_failed', `${ctx.where}: list ${root}: the device broke the SSH channel protocol: ${e.message}`, {
                details: { reason: 'protocol' },
              }),
            );
            try {
              stream.close();
            } catch {
              // Already closed.
            }
          };
          stream.on('error', onError);
          stream.stderr.on('error', onError);
          const out: Buffer[] = [];
          let outBytes = 0;
          let stderr = '';
          let exitCode: number | null = null;
          let overflow = false;
          stream.on('data', (d: Buffer) => {
            touch();
            outBytes += d.length;
            if (outBytes > MAX_LISTING_BYTES) {
              overflow = true;
              stream.close();
            } else out.push(d);
          });
          stream.stderr.on('data', (d: Buffer) => {
            touch();
            stderr = (stderr + d.toString('utf8')).slice(-STDERR_TAIL);
          });
          stream.on('exit', (code: number | null) => {
            exitCode = code;
          });
          stream.on('close', () => {
            if (overflow) {
              return reject(
                new LookoutError('ssh_failed', `${ctx.where}: the listing of ${root} is longer than ${MAX_LISTING_BYTES} bytes`, {
                  details: { reason: 'too_large' },
                }),
              );
            }
            if (exitCode === 3) {
              return reject(
                new LookoutError('ssh_failed', `${ctx.where}: the recordings root ${root} does not exist on the device`, {
                  details: { reason: 'root_missing', recordings_root: root },
                }),
              );
            }
            if (exitCode !== 0) {
              const said = stderr.trim().split('\n').pop()?.slice(0, 300) ?? '';
              return reject(
                new LookoutError('ssh_failed', `${ctx.where}: the listing command exited with ${exitCode ?? 'a signal'}${said ? `: ${said}` : ''}`, {
                  details: { reason: 'command', exit_code: exitCode },
                }),
              );
            }
            resolve(parseListing(Buffer.concat(out, outBytes).toString('utf8')));
          });
        };
        try {
          client.exec(listingCommand(root), open);
        } catch (err) {
          reject(new LookoutError('ssh_failed', `${ctx.where}: ${(err as Error).message}`, { details: { reason: 'channel' } }));
        }
      });
    },
  );
}
