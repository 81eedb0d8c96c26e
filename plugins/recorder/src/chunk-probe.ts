import { LookoutError } from 'lookout/core';
import { runFfmpeg } from 'lookout/lib/media';

/**
 * Decodes a whole chunk and throws `recording_unreadable` with ffmpeg's own message when it does not
 * play: what recovery checks before it lists a chunk rebuilt from a crash.
 */
export async function assertPlays(path: string, fps: number, timeoutMs: number): Promise<void> {
  await runFfmpeg(['-xerror', '-f', 'hevc', '-framerate', String(fps), '-i', path, '-f', 'null', '-'], { timeoutMs }, 'recording_unreadable');
}

/** Resolution of a chunk as ffprobe reads it. */
export async function probeSize(path: string, timeoutMs: number): Promise<{ width: number; height: number }> {
  const out = await runFfmpeg(
    ['-f', 'hevc', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'json', path],
    { timeoutMs, program: 'ffprobe', maxOutputBytes: 65_536 },
    'recording_unreadable',
  );
  const stream = (JSON.parse(out.toString('utf8')) as { streams?: { width?: number; height?: number }[] }).streams?.[0];
  if (!stream?.width || !stream.height) throw new LookoutError('recording_unreadable', `ffprobe found no picture size in ${path}`);
  return { width: stream.width, height: stream.height };
}
