import { z } from 'zod';

const RESOLUTION = /^(\d{2,5})x(\d{2,5})$/;

/** The encoder profile of the camera (what ONVIF SetVideoEncoderConfiguration also writes). */
export const CameraProfileSchema = z.strictObject({
  codec: z.enum(['H265', 'H264']),
  resolution: z
    .string()
    .regex(RESOLUTION, 'WIDTHxHEIGHT, e.g. 1920x1080')
    .refine((r) => {
      const [, w, h] = RESOLUTION.exec(r) ?? [];
      return Number(w) >= 160 && Number(w) <= 7680 && Number(h) >= 120 && Number(h) <= 4320;
    }, 'between 160x120 and 7680x4320'),
  fps: z.number().int().min(1).max(60),
  bitrate_kbps: z.number().int().min(100).max(50_000),
  /** Keyframe interval in frames; a recording chunk starts on a keyframe. */
  gop: z.number().int().min(1).max(600),
  rate_control: z.enum(['CBR', 'VBR']),
});
export type CameraProfile = z.infer<typeof CameraProfileSchema>;

export const DEFAULT_CAMERA_PROFILE: CameraProfile = {
  codec: 'H265',
  resolution: '1920x1080',
  fps: 15,
  bitrate_kbps: 4000,
  gop: 30,
  rate_control: 'VBR',
};

/**
 * set_camera_profile takes any non-empty subset of the fields; the merged profile must be valid as a
 * whole. The refinement is invisible to JSON Schema, so `minProperties` says the same to clients.
 */
export const CameraProfileUpdateSchema = CameraProfileSchema.partial()
  .refine((u) => Object.keys(u).length > 0, 'give at least one field to change')
  .meta({ minProperties: 1 });

/** The profile file: the profile and when it was last set. */
export const ProfileFileSchema = z.object({ profile: CameraProfileSchema, updated_at: z.string() });
export type ProfileFile = z.infer<typeof ProfileFileSchema>;

export const ProfileResultSchema = z.object({
  profile: CameraProfileSchema,
  updated_at: z.string().nullable(),
  path: z.string(),
  /** Fields the last set changed (set_camera_profile only). */
  changed: z.array(z.string()).optional(),
});
