import assert from 'node:assert/strict';
import { test } from 'node:test';
import { busRoleOf, HUB_BUS_USER, isReservedBusId, OPERATOR_BUS_USER } from '../../../../lib/auth/bus-acl.js';
import { deviceBusCredentials } from '../../../../lib/auth/device-bus-credentials.js';

test('ids under the reserved prefix are no device: not issued (device_id_reserved), no device role', () => {
  for (const id of ['lookout-hub-host-1a2b3c4d', 'lookout-hub-host-1a2b3c4d-ingest-0', 'lookout-operator-x', 'lookout-tap-00ff', 'LOOKOUT-HUB-x']) {
    assert.equal(isReservedBusId(id), true, id);
    assert.equal(busRoleOf(id), undefined, id);
    assert.throws(() => deviceBusCredentials('secret', id), { code: 'device_id_reserved' }, id);
  }
  assert.deepEqual(busRoleOf(HUB_BUS_USER), { kind: 'hub' });
  assert.deepEqual(busRoleOf(OPERATOR_BUS_USER), { kind: 'operator' });
  assert.deepEqual(busRoleOf('cam-1'), { kind: 'device', id: 'cam-1' });
  assert.equal(deviceBusCredentials('secret', 'cam-lookout-1').username, 'cam-lookout-1');
  assert.throws(() => deviceBusCredentials('secret', 'a/b'), { code: 'config_invalid' });
});
