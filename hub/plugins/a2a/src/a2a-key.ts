import { fleetA2aKey } from 'lookout/lib/auth';

/**
 * The key A2A requests are signed with: `A2A_HMAC_KEY` when set, else derived from the fleet secret
 * (core's fleetA2aKey: HMAC-SHA256(fleet secret, "a2a:fleet") in base64url). Either way the HMAC key
 * is the UTF-8 bytes of that text. Null without either.
 */
export function a2aKey(config: { A2A_HMAC_KEY?: string | undefined; LOOKOUT_FLEET_SECRET?: string | undefined }): string | null {
  if (config.A2A_HMAC_KEY !== undefined) return config.A2A_HMAC_KEY;
  if (config.LOOKOUT_FLEET_SECRET === undefined) return null;
  return fleetA2aKey(config.LOOKOUT_FLEET_SECRET);
}
