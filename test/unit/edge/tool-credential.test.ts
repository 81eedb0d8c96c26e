import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { deviceToolToken } from '../../../lib/auth/tool-token.js';
import { LookoutError } from '../../../core/src/errors/lookout-error.js';
import { toolTokenFromEnv } from '../../../edge/src/tool-credential.js';

const SECRET = 'fleet-secret-for-unit-tests-0001';

describe('the tool server credential from the environment', () => {
  it('derives the token as HMAC-SHA256(fleet secret, "tools:<device id>"), the same the hub derives', () => {
    const expected = createHmac('sha256', SECRET).update('tools:cam-1').digest('base64url');
    assert.equal(toolTokenFromEnv({ LOOKOUT_FLEET_SECRET: SECRET }, 'cam-1'), expected);
    assert.equal(deviceToolToken(SECRET, 'cam-1'), expected);
    assert.notEqual(toolTokenFromEnv({ LOOKOUT_FLEET_SECRET: SECRET }, 'cam-2'), expected, 'one token per device');
  });

  it('takes LOOKOUT_TOOL_TOKEN as given, before the fleet secret', () => {
    assert.equal(toolTokenFromEnv({ LOOKOUT_TOOL_TOKEN: 'given-token-0123456789', LOOKOUT_FLEET_SECRET: SECRET }, 'cam-1'), 'given-token-0123456789');
  });

  it('has none when neither is set (the server then listens on loopback only)', () => {
    assert.equal(toolTokenFromEnv({}, 'cam-1'), undefined);
    assert.equal(toolTokenFromEnv({ LOOKOUT_TOOL_TOKEN: '', LOOKOUT_FLEET_SECRET: '' }, 'cam-1'), undefined);
  });

  it('refuses short values naming the variable, never showing the value', () => {
    for (const [key, value] of [
      ['LOOKOUT_TOOL_TOKEN', 'tiny-tok'],
      ['LOOKOUT_FLEET_SECRET', 'tiny-secret'],
    ] as const) {
      assert.throws(
        () => toolTokenFromEnv({ [key]: value }, 'cam-1'),
        (err: LookoutError) => err.code === 'config_invalid' && err.message.startsWith(key) && !err.message.includes(value),
      );
    }
  });
});
