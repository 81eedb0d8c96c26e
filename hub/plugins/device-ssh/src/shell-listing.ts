import type { Client } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { shellQuote } from 'lookout/lib/ssh';
import { isRecordingFileName } from './recording-names.js';
import type { RemoteFile } from './service.js';
import type { OpContext } from './sftp-ops.js';
import { commandFailed, execOnChannel } from './exec-channel.js';

/** A listing of tens of thousands of chunks fits; a device writing more is cut off. */
const MAX_LISTING_BYTES = 8 * 1024 * 1024;

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
export async function shellList(client: Client, root: string, ctx: OpContext): Promise<RemoteFile[]> {
  const what = `${ctx.where}: list ${root}`;
  const out: Buffer[] = [];
  let outBytes = 0;
  let overflow = false;
  const end = await execOnChannel(client, listingCommand(root), ctx, {
    what,
    onData: (d, close) => {
      outBytes += d.length;
      if (outBytes <= MAX_LISTING_BYTES) return void out.push(d);
      overflow = true;
      close();
    },
  });
  if (overflow) {
    throw new LookoutError('ssh_failed', `${ctx.where}: the listing of ${root} is longer than ${MAX_LISTING_BYTES} bytes`, {
      details: { reason: 'too_large' },
    });
  }
  if (end.exitCode === 3) {
    throw new LookoutError('ssh_failed', `${ctx.where}: the recordings root ${root} does not exist on the device`, {
      details: { reason: 'root_missing', recordings_root: root },
    });
  }
  if (end.exitCode !== 0) throw commandFailed(what, end);
  return parseListing(Buffer.concat(out, outBytes).toString('utf8'));
}
