import { readFile, stat } from 'node:fs/promises';

/** Shorter keys are refused: the config key has the same floor. */
export const MIN_MESH_KEY_CHARS = 16;

export interface MeshKey {
  /** The key bytes; null: none usable (then nothing is sent and nothing accepted). */
  key: Buffer | null;
  source: 'MESH_KEY' | 'file' | null;
  /** Why there is no key, or what is wrong with the file holding it; never the key itself. */
  problem: string | null;
}

/** MESH_KEY when set, else the key file (its text, surrounding whitespace ignored). */
export async function loadMeshKey(configured: string | undefined, file: string): Promise<MeshKey> {
  if (configured) return { key: Buffer.from(configured, 'utf8'), source: 'MESH_KEY', problem: null };
  let text: string;
  try {
    text = (await readFile(file, 'utf8')).trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `MESH_KEY is unset and ${file} does not exist` : `the key file ${file} cannot be read (${code ?? 'error'})`;
    return { key: null, source: null, problem: why };
  }
  if (text.length < MIN_MESH_KEY_CHARS) return { key: null, source: null, problem: `the key file ${file} holds fewer than ${MIN_MESH_KEY_CHARS} characters` };
  const mode = (await stat(file)).mode & 0o077;
  const problem = mode ? `the key file ${file} is readable by group or others (mode should be 0600)` : null;
  return { key: Buffer.from(text, 'utf8'), source: 'file', problem };
}
