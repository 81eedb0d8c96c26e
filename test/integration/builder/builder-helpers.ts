/**
 * Helpers of the builder tests: a builder on a free port over a temp data dir, and dataset trees with
 * real image files written by ffmpeg. Not a test file itself.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../../../core/src/log/logger.js';
import { startBuilder, type RunningBuilder } from '../../../builder/src/start-builder.js';
import type { BuilderOptions } from '../../../builder/src/builder-options.js';
import { api, waitFor } from '../../support/hub-helpers.js';

const run = promisify(execFile);
/** Clips written so far: each gets its own seed, so that no two clips share a frame's bytes. */
let clipsWritten = 0;

export function testBuilder(dataDir: string, options: BuilderOptions = {}): Promise<RunningBuilder> {
  return startBuilder({
    port: 0,
    dataDir,
    logger: createLogger({ level: process.env.LOOKOUT_LOG_LEVEL ?? 'silent' }),
    ...options,
    env: { LOOKOUT_BUILDER_DATASET_ROOTS: dataDir, ...(options.env ?? {}) },
  });
}

/**
 * `count` frames of one clip as real images written by ffmpeg (a cellular automaton), at `dir/<name>_<n>.<ext>` or, with `folder`, at `dir/<name>/<n>.<ext>`.
 */
export async function writeClip(
  dir: string,
  name: string,
  count: number,
  o: { ext?: 'jpg' | 'png'; size?: string; folder?: boolean; start?: number } = {},
): Promise<string[]> {
  const ext = o.ext ?? 'jpg';
  const out = o.folder ? join(dir, name) : dir;
  await mkdir(out, { recursive: true });
  const tmp = join(out, `.tmp-${name}`);
  await mkdir(tmp, { recursive: true });
  // A rule-30 automaton seeded per clip: every frame of every clip differs (a new row each frame).
  const seed = ++clipsWritten;
  await run('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `cellauto=size=${o.size ?? '64x48'}:rate=10:rule=30:seed=${seed}`,
    '-frames:v',
    String(count),
    '-start_number',
    String(o.start ?? 1),
    join(tmp, `%03d.${ext}`),
  ]);
  const files: string[] = [];
  for (const f of (await readdir(tmp)).sort()) {
    const target = o.folder ? join(out, f) : join(out, `${name}_${f}`);
    await rename(join(tmp, f), target);
    files.push(target);
  }
  await run('rmdir', [tmp]);
  return files;
}

export async function writeText(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

/** POSTs an import and polls its status until it is READY or FAILED. */
export async function importAndWait(base: string, body: Record<string, unknown>, token?: string): Promise<any> {
  const started = await api(base, '/api/datasets', { json: body, ...(token ? { token } : {}) });
  if (started.status !== 202) throw new Error(`import refused: ${started.status} ${started.text}`);
  return waitFor(`dataset ${String(body.name)} imported`, async () => {
    const s = await api(base, `/api/datasets/${String(body.name)}`, token ? { token } : {});
    return s.body.state === 'IMPORTING' ? undefined : s.body;
  });
}

/** Every frame of a dataset with its boxes, by image path. */
export async function framesByImage(base: string, name: string): Promise<Map<string, any>> {
  const out = new Map<string, any>();
  for (let offset = 0; ; offset += 1000) {
    const page = await api(base, `/api/datasets/${name}/frames?offset=${offset}&limit=1000`);
    for (const f of page.body.frames) out.set(f.image, f);
    if (page.body.frames.length < 1000) return out;
  }
}
