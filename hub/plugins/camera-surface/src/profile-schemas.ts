import { z } from 'zod';
import { CameraProfileSchema, CameraProfileUpdateSchema, type CameraProfile } from '../../../../plugins/camera-profile/src/service.js';

export type { CameraProfile };

/** PUT /camera/profile: any non-empty subset of the fields (set_camera_profile's arguments), checked before a device is contacted. */
export const CameraProfileUpdateBody = CameraProfileUpdateSchema.describe('fields of the camera profile to change; the merged profile must be valid');

/** What get_camera_profile and set_camera_profile answer. */
export const ProfileResult = z.object({
  // Loose: a device newer than this hub may have fields of its own; they pass through.
  profile: z.looseObject(CameraProfileSchema.shape),
  updated_at: z.string().nullable(),
  path: z.string(),
  changed: z.array(z.string()).optional().describe('fields the set changed (PUT only)'),
});
export type ProfileResult = z.infer<typeof ProfileResult>;
