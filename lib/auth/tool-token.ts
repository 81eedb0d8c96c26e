import { deriveDeviceSecret } from './device-credentials.js';

/** Purpose string of tool-server tokens: the token is HMAC-SHA256(fleet secret, "tools:<device id>"). */
export const TOOL_TOKEN_PURPOSE = 'tools';

/** Shortest tool token a device accepts: a shorter one could be guessed. A derived one has 43 characters. */
export const MIN_TOOL_TOKEN_CHARS = 16;

/**
 * The bearer token a device's tool server requires beyond loopback. The device derives it from the
 * fleet secret (or is given it), and the hub derives the same one to call that device: a token
 * opens one device's tools and says nothing about another's.
 */
export function deviceToolToken(fleetSecret: string, deviceId: string): string {
  return deriveDeviceSecret(fleetSecret, TOOL_TOKEN_PURPOSE, deviceId);
}
