import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { pack } from 'tar-stream';

export interface TarEntry {
  name: string;
  /** Text or bytes in memory, or a file streamed in (a DLC is about 100 MB). */
  data?: string | Uint8Array;
  file?: string;
}

/** Writes a tar of `entries` at `path` with tar-stream, streaming file entries; answers its SHA-256 and size. */
export async function writePackageTar(path: string, entries: TarEntry[]): Promise<{ sha256: string; bytes: number }> {
  await mkdir(dirname(path), { recursive: true });
  const tar = pack();
  const written = pipeline(tar, createWriteStream(path));
  const mtime = new Date();
  for (const e of entries) {
    if (e.file !== undefined) {
      const size = (await stat(e.file)).size;
      const sink = tar.entry({ name: e.name, size, mode: 0o644, mtime });
      await pipeline(createReadStream(e.file), sink);
    } else {
      const data = typeof e.data === 'string' ? Buffer.from(e.data) : Buffer.from(e.data ?? new Uint8Array());
      await new Promise<void>((resolve, reject) =>
        tar.entry({ name: e.name, size: data.length, mode: 0o644, mtime }, data, (err) => (err ? reject(err) : resolve())),
      );
    }
  }
  tar.finalize();
  await written;
  // Hashed from the file as written: what a device will check after the copy.
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return { sha256: hash.digest('hex'), bytes: (await stat(path)).size };
}
