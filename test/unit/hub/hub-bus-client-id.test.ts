import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isReservedBusId } from '../../../lib/auth/bus-acl.js';
import { hubBusClientId } from '../../../hub/src/hub-bus-client-id.js';

test("the hub's client id is reserved, stable for one hub and secret, and not derivable without the secret", () => {
  const id = hubBusClientId('fleet-secret-1', 'lookout-hub-host-1a2b3c4d');
  assert.match(id, /^lookout-hub-[A-Za-z0-9_-]{22}$/);
  assert.equal(isReservedBusId(id), true);
  assert.equal(hubBusClientId('fleet-secret-1', 'lookout-hub-host-1a2b3c4d'), id, 'a restart keeps its persistent session');
  assert.notEqual(hubBusClientId('fleet-secret-2', 'lookout-hub-host-1a2b3c4d'), id);
  assert.notEqual(hubBusClientId('fleet-secret-1', 'lookout-hub-host-00000000'), id);
  assert.ok(!id.includes('host'), 'nothing of the host name or data dir shows');
});
