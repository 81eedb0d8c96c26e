import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { it } from 'node:test';
import { a2aKey } from '../../../../../hub/plugins/a2a/src/a2a-key.js';

it('the A2A key: A2A_HMAC_KEY when set, else HMAC-SHA256(fleet secret, "a2a:fleet") base64url, else none', () => {
  const secret = 'fleet-secret-of-the-test-0001';
  assert.equal(a2aKey({ A2A_HMAC_KEY: 'configured-key-0123456789', LOOKOUT_FLEET_SECRET: secret }), 'configured-key-0123456789');
  assert.equal(a2aKey({ LOOKOUT_FLEET_SECRET: secret }), createHmac('sha256', secret).update('a2a:fleet').digest('base64url'));
  assert.equal(a2aKey({}), null);
});
