import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { toLookoutError } from 'lookout/core';

/** One file of the archive: its path under the archive's folder and its text (already scrubbed). */
export interface ExportEntry {
  name: string;
  text: string;
}

/**
 * A gzip'd tar (ustar, by tar-stream) of the entries under one folder named `folder`, in memory:
 * the entries are bounded by the caller (ring, log lines, device tails), so the archive is too.
 */
export async function tarGz(folder: string, entries: ExportEntry[], mtime = new Date()): Promise<Buffer> {
  const tar = pack();
  const gzip = createGzip();
  const parts: Buffer[] = [];
  gzip.on('data', (b: Buffer) => parts.push(b));
  const finished = new Promise<void>((resolve, reject) => {
    gzip.on('end', resolve);
    gzip.on('error', reject);
    tar.on('error', reject);
  });
  tar.pipe(gzip);
  for (const e of entries) {
    await new Promise<void>((resolve, reject) =>
      tar.entry({ name: `${folder}/${e.name}`, mtime, mode: 0o644 }, e.text, (err) => (err ? reject(toLookoutError(err)) : resolve())),
    );
  }
  tar.finalize();
  await finished;
  return Buffer.concat(parts);
}
