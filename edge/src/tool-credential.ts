import { deviceToolToken, MIN_TOOL_TOKEN_CHARS } from 'lookout/lib/auth';
import { LookoutError } from 'lookout/core';

/** The fleet secret is at least this long wherever it is made (the hub creates 43 characters). */
const MIN_FLEET_SECRET_CHARS = 16;

/**
 * The tool server's bearer token, from the environment only (never argv, where every local user
 * can read it): `LOOKOUT_TOOL_TOKEN` as given, else derived from `LOOKOUT_FLEET_SECRET` and the
 * device id, the way the hub derives it to call this device. Undefined when neither is set. Errors
 * name the variable, never its value. Used byte for byte as given, like the hub uses it.
 */
export function toolTokenFromEnv(env: Record<string, string | undefined>, deviceId: string): string | undefined {
  const token = env.LOOKOUT_TOOL_TOKEN;
  if (token) {
    if (token.length < MIN_TOOL_TOKEN_CHARS) throw tooShort('LOOKOUT_TOOL_TOKEN', MIN_TOOL_TOKEN_CHARS);
    return token;
  }
  const secret = env.LOOKOUT_FLEET_SECRET;
  if (!secret) return undefined;
  if (secret.length < MIN_FLEET_SECRET_CHARS) throw tooShort('LOOKOUT_FLEET_SECRET', MIN_FLEET_SECRET_CHARS);
  return deviceToolToken(secret, deviceId);
}

function tooShort(key: string, min: number): LookoutError {
  return new LookoutError('config_invalid', `${key} must be at least ${min} characters`, { details: { key, usage: true } });
}
