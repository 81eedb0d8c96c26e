import { extract } from 'tar-stream';
import { LookoutError } from 'lookout/core';
import type { ByteSource } from './byte-source.js';

/**
 * Reads a package tar in place with tar-stream: every entry is listed and the few wanted are kept in
 * memory, nothing is written out. A package is our own artefact, so anything odd in it (an escaping
 * name, a link, a duplicate) is refused rather than skipped: a half-read model must not load.
 */

export type TarEntryType = 'file' | 'directory';

export interface TarEntry {
  /** Normalized: no leading `./`, no empty or `.` segments, no trailing `/`. */
  name: string;
  type: TarEntryType;
  size: number;
}

export interface TarContents {
  entries: TarEntry[];
  /** The bytes of the files `keep` selected, by entry name. */
  data: Map<string, Uint8Array>;
}

// tar-stream's own messages (matched exactly; an unknown one is passed through as it is).
const TAR_STREAM_ERRORS: Record<string, string> = {
  'Unexpected end of data': 'truncated (the archive ends inside a header or an entry)',
  'Invalid tar header. Maybe the tar is corrupted or it needs to be gunzipped?': 'checksum mismatch in a header (not a tar archive, compressed, or corrupt)',
  'Invalid tar header: unknown format.': 'a header is neither ustar nor GNU (pre-POSIX tars are not read)',
  'Invalid header': 'a header declares an invalid size',
  'Header exceeds max size': 'a long-name or pax header is larger than 4 MiB',
};

function describe(err: unknown): string {
  const { code, message } = err as NodeJS.ErrnoException;
  if (code) return `cannot read it (${code})`;
  return TAR_STREAM_ERRORS[message] ?? message;
}

/** tar-stream passes names through as written; keeping them inside the package is ours to check. */
function entryName(raw: string, fail: (what: string) => LookoutError): string {
  if (raw.startsWith('/')) throw fail(`entry "${raw}" has an absolute path`);
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw fail(`entry "${raw}" has a ".." segment`);
  return segments.join('/');
}

/** Lists the archive's entries and keeps the bytes of the files `keep` selects. */
export async function readTar(source: ByteSource, keep: (entry: TarEntry) => boolean = () => false): Promise<TarContents> {
  const fail = (what: string, cause?: unknown) => new LookoutError('model_package_invalid', `${source.name}: ${what}`, { cause });
  const entries: TarEntry[] = [];
  const data = new Map<string, Uint8Array>();
  const seen = new Set<string>();
  let opened: Awaited<ReturnType<ByteSource['open']>> | undefined;
  try {
    opened = await source.open();
    const { size: archiveSize, stream: input } = opened;
    const tar = extract();
    input.on('error', (err) => tar.destroy(err));
    input.pipe(tar);

    for await (const stream of tar) {
      const { header } = stream;
      const name = entryName(header.name, fail);
      // tar-stream hands out links, devices and fifos like any entry; which types a package may hold is ours.
      const type = header.type as string | null;
      const regular = type === 'file' || type === 'contiguous-file';
      if (!regular && type !== 'directory') {
        throw fail(`entry "${name}" is ${type ? `a ${type}` : 'of an unknown type'}; a package holds only files and folders`);
      }
      if (name === '') {
        if (regular) throw fail(`a file entry has no name ("${header.name}")`);
        stream.resume(); // the archive's own root (`./`, as `tar -C dir .` writes it)
        continue;
      }
      // A streaming parser does not remember names, so a later entry silently repeating one is ours to catch.
      if (seen.has(name)) throw fail(`entry "${name}" appears twice`);
      seen.add(name);
      // tar-stream only notices an oversized entry when the stream ends; refusing it here keeps the
      // buffer below from being sized by a header's claim rather than by the file.
      if (header.size > archiveSize) {
        throw fail(`entry "${name}" claims ${header.size} bytes but the archive holds ${archiveSize} (truncated)`);
      }
      const entry: TarEntry = { name, type: regular ? 'file' : 'directory', size: header.size };
      entries.push(entry);
      if (regular && keep(entry)) data.set(name, await collect(stream, entry.size));
      else stream.resume();
    }
  } catch (err) {
    if (err instanceof LookoutError) throw err;
    throw fail(`not a readable tar package: ${describe(err)}`, err);
  } finally {
    opened?.stream.destroy();
  }
  // To tar-stream an archive of end blocks only is a valid empty one; as a package it is not.
  if (entries.length === 0) throw fail('not a readable tar package: the archive holds no entries');
  return { entries, data };
}

async function collect(stream: AsyncIterable<unknown>, size: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(size);
  let at = 0;
  for await (const chunk of stream as AsyncIterable<Uint8Array>) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}
