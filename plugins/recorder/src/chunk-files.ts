import { readdir } from 'node:fs/promises';
import { CHUNK_NAME_PATTERN } from 'lookout/core/contracts';

/**
 * The files of one chunk. Names are `<YYYYMMDDTHHMMSSmmmZ>_<seq 6 digits>.h265`; while written, the
 * chunk and its detection log carry a leading dot and `.part` (never matching CHUNK_NAME_PATTERN, so
 * no reader lists an incomplete chunk).
 */
export const files = {
  sidecar: (chunk: string) => chunk.replace(/\.h265$/, '.json'),
  detsLog: (chunk: string) => chunk.replace(/\.h265$/, '.dets.jsonl'),
  part: (name: string) => `.${name}.part`,
} as const;

export const STATUS_FILE = '.h265_status';
export const MANIFEST_FILE = 'recent_manifest.jsonl';

/** `20260101T120000123Z_000042.h265` from a start time and a sequence number. */
export function chunkName(startedAtMs: number, seq: number): string {
  const stamp = new Date(startedAtMs).toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${stamp}_${String(seq % 1_000_000).padStart(6, '0')}.h265`;
}

const NAME_PARTS = /^(\d{8}T\d{9}Z)_(\d{6})\.h265$/;

/** The start time and sequence a recorder's name carries (undefined for a name from elsewhere). */
export function parseChunkName(name: string): { startedAtMs: number; seq: number } | undefined {
  const m = NAME_PARTS.exec(name);
  if (!m) return undefined;
  const s = m[1];
  const iso = `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(9, 11)}:${s.slice(11, 13)}:${s.slice(13, 15)}.${s.slice(15, 18)}Z`;
  const at = Date.parse(iso);
  return Number.isFinite(at) ? { startedAtMs: at, seq: Number(m[2]) } : undefined;
}

/** Complete chunks in the folder, oldest first (names sort by time, then sequence). */
export async function listChunkFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => CHUNK_NAME_PATTERN.test(n)).sort();
}
