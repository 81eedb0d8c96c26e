import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ChunkSidecarSchema, type ChunkSidecar } from 'lookout/core/contracts';
import { writeFileAtomic } from 'lookout/core';
import { MANIFEST_FILE } from './chunk-files.js';

/** `recent_manifest.jsonl`: the newest complete chunks, one sidecar per line, oldest first; rewritten atomically. */
export async function writeManifest(dir: string, newestLast: readonly ChunkSidecar[], entries: number): Promise<void> {
  const lines = newestLast.slice(-entries).map((s) => JSON.stringify(s));
  await writeFileAtomic(join(dir, MANIFEST_FILE), lines.length > 0 ? `${lines.join('\n')}\n` : '');
}

/** The manifest's valid lines (a missing file is an empty manifest). */
export async function readManifest(dir: string): Promise<ChunkSidecar[]> {
  let text: string;
  try {
    text = await readFile(join(dir, MANIFEST_FILE), 'utf8');
  } catch {
    return [];
  }
  const out: ChunkSidecar[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = ChunkSidecarSchema.safeParse(JSON.parse(line));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // not a line of ours
    }
  }
  return out;
}
