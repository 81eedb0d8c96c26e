import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSidecar, writeSidecar } from '../../../../plugins/recorder/src/sidecar.js';
import { chunkName } from '../../../../plugins/recorder/src/chunk-files.js';
import { countPictures } from '../../../../lib/media/index.js';

/** One second of real libx265 output (320x240, 5 fps, one keyframe). */
export function realChunkBytes(): Buffer {
  return execFileSync('ffmpeg', [
    ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=5', '-t', '1'],
    ...['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'keyint=5:min-keyint=5:scenecut=0:bframes=0:repeat-headers=1:log-level=error'],
    ...['-f', 'hevc', 'pipe:1'],
  ]);
}

/**
 * Writes `count` chunks a second apart from `startMs` with their sidecars and logs, as the recorder
 * would; `justified(i)` says which carry a person over the gate. `padTo` pads each file (zeros after
 * the last picture, which decoders ignore) to take real room on a small filesystem.
 */
export async function writeChunks(
  dir: string,
  count: number,
  options: { startMs?: number; justified?: (i: number) => boolean; padTo?: number; firstSeq?: number } = {},
): Promise<string[]> {
  const bytes = realChunkBytes();
  const { frames, keyframes } = countPictures(bytes);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const startedAtMs = (options.startMs ?? Date.parse('2026-03-01T10:00:00Z')) + i * 1000;
    const name = chunkName(startedAtMs, (options.firstSeq ?? 0) + i);
    const data = options.padTo && options.padTo > bytes.length ? Buffer.concat([bytes, Buffer.alloc(options.padTo - bytes.length)]) : bytes;
    writeFileSync(join(dir, name), data);
    const dets = options.justified?.(i) ? [{ t: startedAtMs + 100, dets: [{ c: 0, p: 0.9, track_id: 7 }] }] : [];
    writeFileSync(join(dir, name.replace('.h265', '.dets.jsonl')), dets.map((d) => `${JSON.stringify(d)}\n`).join(''));
    await writeSidecar(
      dir,
      buildSidecar(
        { dir, name, startedAtMs, frames, keyframes, fps: 5, width: 320, height: 240, sizeBytes: data.length, dets, strideFps: 0 },
        { person: 0.35, weapon: 0.5 },
      ),
    );
    names.push(name);
  }
  return names;
}
