import { z } from 'zod';

const RESOLUTION = /^(\d{2,5})x(\d{2,5})$/;

/**
 * Keys of the encode plugin. The ENCODE_* settings override the camera profile (each one alone), so a
 * test or a small simulated fleet can run 320x240 at 5 fps whatever the profile says; without a
 * profile and without overrides the default profile's values apply.
 */
export const EncodeConfigSchema = z.object({
  ENCODE_RESOLUTION: z.string().regex(RESOLUTION, 'WIDTHxHEIGHT, e.g. 320x240').optional().describe('overrides the profile resolution'),
  ENCODE_FPS: z.coerce.number().int().min(1).max(60).optional().describe('overrides the profile fps'),
  ENCODE_BITRATE_KBPS: z.coerce.number().int().min(50).max(50_000).optional().describe('overrides the profile bitrate_kbps'),
  ENCODE_GOP: z.coerce.number().int().min(1).max(600).optional().describe('overrides the profile gop (keyframe interval in pictures)'),
  ENCODE_RATE_CONTROL: z.enum(['CBR', 'VBR']).optional().describe('overrides the profile rate_control'),
  ENCODE_FFMPEG: z.string().min(1).default('ffmpeg').describe('the ffmpeg program of the software encoder'),
  ENCODE_MAX_QUEUED_FRAMES: z.coerce.number().int().min(1).max(30).default(2).describe('raw frames waiting for the encoder before new ones are dropped'),
  ENCODE_STATS_WINDOW_MS: z.coerce.number().int().min(500).max(600_000).default(5000).describe('window of bitrate_kbps and encode_fps'),
  ENCODE_RESTART_MIN_MS: z.coerce.number().int().min(10).max(600_000).default(1000).describe('first wait before restarting an encoder that exited'),
  ENCODE_RESTART_MAX_MS: z.coerce.number().int().min(10).max(3_600_000).default(60_000).describe('longest wait between restarts (the wait doubles)'),
  ENCODE_H264: z
    .enum(['on_request', 'off'])
    .default('on_request')
    .describe('on_request: the encoder adds an H.264 output (same ffmpeg run) once a consumer such as the RTSP preview asks; off: H.265 only'),
  ENCODE_GOP_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(65_536)
    .max(512 * 1024 * 1024)
    .default(32 * 1024 * 1024)
    .describe('bound of the kept latest GOP'),
  LIVE_HOST: z
    .string()
    .min(1)
    .optional()
    .describe("address of the live stream server (default: the tool server's, --tool-host); beyond loopback it needs the tool token"),
  LIVE_PORT: z.coerce.number().int().min(0).max(65_535).optional().describe('port of GET /live.h265; default the live surface port (0 = any free port)'),
  LIVE_TLS: z
    .enum(['auto', 'on', 'off'])
    .default('auto')
    .describe(
      'auto: HTTPS with the device certificate beyond loopback (no certificate: the stream stays on 127.0.0.1), and on loopback when the tool server beside it serves HTTPS; on: HTTPS on loopback too; off: plain HTTP even beyond loopback (the token and the video in clear, warned)',
    ),
  LIVE_MAX_CLIENTS: z.coerce.number().int().min(1).max(256).default(8).describe('live clients at once; more get 503'),
  LIVE_MAX_BUFFER_BYTES: z.coerce
    .number()
    .int()
    .min(65_536)
    .max(256 * 1024 * 1024)
    .default(8 * 1024 * 1024)
    .describe('bytes a live client may lag behind before it is dropped'),
  LIVE_JPEG_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5000).describe('get_live_jpeg: waiting plus decoding'),
  LIVE_JPEG_QUEUE: z.coerce.number().int().min(0).max(64).default(4).describe('get_live_jpeg calls waiting behind the one decoding; more get device_busy'),
  /** The device's tool token (as lookout-edge reads it): callers of the live stream beyond loopback present it. */
  LOOKOUT_TOOL_TOKEN: z.string().min(16).optional(),
  /** Or the fleet secret, from which the token is derived as the hub derives it. */
  LOOKOUT_FLEET_SECRET: z.string().min(16).optional(),
});
export type EncodeConfig = z.output<typeof EncodeConfigSchema>;

export function parseResolution(resolution: string): { width: number; height: number } {
  const [, w, h] = RESOLUTION.exec(resolution) ?? [];
  return { width: Number(w), height: Number(h) };
}
