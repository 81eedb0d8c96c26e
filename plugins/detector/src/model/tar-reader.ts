import type { ByteSource } from './byte-source.js';

/**
 * A small ustar reader (POSIX ustar, GNU long names, pax `path`/`size` records). Packages are read,
 * never extracted by name, so entry names cannot escape anywhere; every inconsistency is an error
 * because a half-read model must not load.
 */

export type TarEntryType = 'file' | 'directory' | 'other';

export interface TarEntry {
  name: string;
  type: TarEntryType;
  size: number;
  /** Byte offset of the entry's data in the archive. */
  dataOffset: number;
}

export class TarFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarFormatError';
  }
}

const BLOCK = 512;
const decoder = new TextDecoder();

function cString(block: Uint8Array, start: number, length: number): string {
  let end = start;
  const stop = start + length;
  while (end < stop && block[end] !== 0) end++;
  return decoder.decode(block.subarray(start, end));
}

/** Octal numeric field, or GNU base-256 when the top bit is set (sizes over 8 GiB). */
function numericField(block: Uint8Array, start: number, length: number, what: string, at: number): number {
  if ((block[start]! & 0x80) !== 0) {
    let value = block[start]! & 0x7f;
    for (let i = start + 1; i < start + length; i++) value = value * 256 + block[i]!;
    return value;
  }
  const text = cString(block, start, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarFormatError(`header at byte ${at}: ${what} field is not octal ("${text}")`);
  return parseInt(text, 8);
}

function isZeroBlock(block: Uint8Array): boolean {
  for (let i = 0; i < BLOCK; i++) if (block[i] !== 0) return false;
  return true;
}

function verifyChecksum(block: Uint8Array, at: number): void {
  const stored = numericField(block, 148, 8, 'checksum', at);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  if (sum !== stored) throw new TarFormatError(`header at byte ${at}: checksum mismatch (not a tar archive, or corrupt)`);
}

function parsePax(data: Uint8Array): Map<string, string> {
  const records = new Map<string, string>();
  const text = decoder.decode(data);
  let pos = 0;
  while (pos < text.length) {
    const space = text.indexOf(' ', pos);
    if (space < 0) break;
    const len = parseInt(text.slice(pos, space), 10);
    if (!Number.isFinite(len) || len <= 0) throw new TarFormatError('malformed pax extended header');
    const record = text.slice(space + 1, pos + len - 1);
    const eq = record.indexOf('=');
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1));
    pos += len;
  }
  return records;
}

function normalizeName(name: string): string {
  return name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
}

/** Lists the archive's entries; throws TarFormatError on anything truncated or malformed. */
export async function listTarEntries(source: ByteSource): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  let offset = 0;
  let longName: string | null = null;
  let pax: Map<string, string> | null = null;
  if (source.size < BLOCK) throw new TarFormatError(`file of ${source.size} bytes is shorter than one tar header`);

  while (offset + BLOCK <= source.size) {
    const block = await source.read(offset, BLOCK);
    if (block.length < BLOCK) throw new TarFormatError(`header at byte ${offset} is truncated`);
    if (isZeroBlock(block)) return finish(entries);
    verifyChecksum(block, offset);

    const typeflag = String.fromCharCode(block[156]!);
    let size = numericField(block, 124, 12, 'size', offset);
    const magic = cString(block, 257, 6);
    const prefix = magic.startsWith('ustar') ? cString(block, 345, 155) : '';
    let name = cString(block, 0, 100);
    if (prefix) name = `${prefix}/${name}`;
    if (pax?.has('size')) size = Number(pax.get('size'));
    if (pax?.has('path')) name = pax.get('path')!;
    if (longName !== null) name = longName;

    const dataOffset = offset + BLOCK;
    if (dataOffset + size > source.size) {
      throw new TarFormatError(
        `entry "${normalizeName(name)}" needs ${size} bytes at byte ${dataOffset} but the file ends at ${source.size} (truncated)`,
      );
    }
    offset = dataOffset + Math.ceil(size / BLOCK) * BLOCK;

    if (typeflag === 'L') {
      longName = cString(await source.read(dataOffset, size), 0, size);
      continue;
    }
    if (typeflag === 'x') {
      pax = parsePax(await source.read(dataOffset, size));
      continue;
    }
    longName = null;
    pax = null;
    if (typeflag === 'g') continue;
    const type: TarEntryType = typeflag === '0' || typeflag === '\0' || typeflag === '7' ? 'file' : typeflag === '5' ? 'directory' : 'other';
    entries.push({ name: normalizeName(name), type, size, dataOffset });
  }
  if (offset !== source.size) throw new TarFormatError(`archive ends inside a header at byte ${offset} (truncated)`);
  // Some writers omit the two end-of-archive blocks; an archive that ends on an entry boundary is whole.
  return finish(entries);
}

function finish(entries: TarEntry[]): TarEntry[] {
  if (entries.length === 0) throw new TarFormatError('archive holds no entries');
  return entries;
}

export async function readTarEntry(source: ByteSource, entry: TarEntry): Promise<Uint8Array> {
  const data = await source.read(entry.dataOffset, entry.size);
  if (data.length !== entry.size) throw new TarFormatError(`entry "${entry.name}" is truncated`);
  return data;
}
