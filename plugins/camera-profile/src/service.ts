import { serviceToken } from 'lookout/core';
import type { CameraProfile } from './profile-schema.js';

/** The camera's encoder profile, for the encoder and the ONVIF surface (SetVideoEncoderConfiguration). */
export interface CameraProfileService {
  get(): CameraProfile;
  /** Validates, persists and announces; throws tool_arguments_invalid and leaves the file as it was. */
  set(update: Partial<CameraProfile>): Promise<{ profile: CameraProfile; changed: string[] }>;
  onChange(listener: (profile: CameraProfile) => void): () => void;
}

export const CameraProfileToken = serviceToken<CameraProfileService>('camera-profile');

/** The profile's schemas, for the hub and the ONVIF surface that check a profile before a device sees it. */
export { CameraProfileSchema, CameraProfileUpdateSchema, ProfileResultSchema, type CameraProfile } from './profile-schema.js';
