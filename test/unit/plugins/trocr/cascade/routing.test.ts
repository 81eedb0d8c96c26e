import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PRODUCTION_NAMED_LABELS } from '../../../../../core/src/contracts/production-classes.js';
import { routingOf } from '../../../../../plugins/trocr/src/cascade/routing.js';
import { textClasses } from '../../../../../plugins/trocr/src/cascade/signage-classes.js';

test('the cascade is routed to the precision role only: SVC_DEVICE_ID containing shadow2, and not encode-only', () => {
  assert.equal(routingOf({ SVC_DEVICE_ID: 'fleet-shadow2-a', EDGE_V3_ENCODE_ONLY: '0' }).idleReason, null);
  assert.match(routingOf({ EDGE_V3_ENCODE_ONLY: '0' }).idleReason!, /SVC_DEVICE_ID is not set.*containing shadow2/);
  assert.match(routingOf({ SVC_DEVICE_ID: 'shadow1', EDGE_V3_ENCODE_ONLY: '0' }).idleReason!, /SVC_DEVICE_ID=shadow1 does not contain shadow2/);
  const encodeOnly = routingOf({ SVC_DEVICE_ID: 'shadow2', EDGE_V3_ENCODE_ONLY: '1' });
  assert.match(encodeOnly.idleReason!, /EDGE_V3_ENCODE_ONLY=1 reserves the camera for the encoder/);
  assert.deepEqual({ ...encodeOnly, idleReason: null }, { svc_device_id: 'shadow2', precision_role: true, encode_only: true, idleReason: null });
});

test('plates and signs are found through the remap by the model’s labels; the production map has none', () => {
  const omniRemapped = [
    { id: 0, name: 'person', model_labels: ['person'] },
    { id: 10, name: 'gun', model_labels: ['handgun'] },
    { id: 14, name: 'license_plate', model_labels: ['license_plate'] },
    { id: 15, name: 'sign', model_labels: ['sign'] },
  ];
  assert.deepEqual(textClasses(omniRemapped), [
    { id: 14, label: 'license_plate' },
    { id: 15, label: 'sign' },
  ]);
  const production = PRODUCTION_NAMED_LABELS.map((name, id) => ({ id, name, model_labels: [name] }));
  assert.deepEqual(textClasses(production), [], 'production id 10 is gun, 11 knife: never read as text');
});
