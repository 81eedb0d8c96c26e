import { runFfmpeg } from '../../../../lib/media/ffmpeg-process.js';

export interface ProbedFrame {
  key_frame: number;
  width: number;
  height: number;
}

/** Every frame ffprobe decodes from a raw H.265 Annex B stream, with its key flag and size. */
export async function probeHevc(stream: Uint8Array): Promise<ProbedFrame[]> {
  const out = await runFfmpeg(['-f', 'hevc', '-i', 'pipe:0', '-show_entries', 'frame=key_frame,width,height', '-of', 'json'], {
    input: stream,
    timeoutMs: 20_000,
    program: 'ffprobe',
  });
  return (JSON.parse(out.toString('utf8')) as { frames: ProbedFrame[] }).frames;
}

/** Positions of the keyframes among the decoded frames. */
export function keyframePositions(frames: ProbedFrame[]): number[] {
  return frames.flatMap((f, i) => (f.key_frame === 1 ? [i] : []));
}
