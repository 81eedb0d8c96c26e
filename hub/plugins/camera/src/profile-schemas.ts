import { z } from 'zod';
import type { CameraProfileService } from '../../../../plugins/camera-profile/src/service.js';

/** The device's profile type, through the camera-profile plugin's published surface (service.ts). */
export type CameraProfile = ReturnType<CameraProfileService['get']>;

const RESOLUTION = /^(\d{2,5})x(\d{2,5})$/;

/**
 * The device's profile fields, checked at the hub so a client gets a 400 naming the field before
 * any device is contacted. A copy of plugins/camera-profile's CameraProfileSchema: service.ts does
 * not export the schema and a plugin may import nothing else of another plugin. The `satisfies`
 * below keeps the field names and types in step with the device's; the device validates the
 * merged profile again (its ranges win, answered as tool_arguments_invalid).
 */
export const CameraProfileFields = z.strictObject({
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
  gop: z.number().int().min(1).max(600).describe('keyframe interval in frames'),
  rate_control: z.enum(['CBR', 'VBR']),
}) satisfies z.ZodType<CameraProfile>;

/** PUT /camera/profile: any non-empty subset of the fields (set_camera_profile's arguments). */
export const CameraProfileUpdateBody = CameraProfileFields.partial()
  .refine((u) => Object.keys(u).length > 0, 'give at least one field to change')
  .meta({ minProperties: 1 })
  .describe('fields of the camera profile to change; the merged profile must be valid');

/** What get_camera_profile and set_camera_profile answer. */
export const ProfileResult = z.object({
  // Loose: a device newer than this hub may have fields of its own; they pass through.
  profile: z.looseObject(CameraProfileFields.shape),
  updated_at: z.string().nullable(),
  path: z.string(),
  changed: z.array(z.string()).optional().describe('fields the set changed (PUT only)'),
});
export type ProfileResult = z.infer<typeof ProfileResult>;
