import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HelloMessageSchema } from '../../../../../core/src/contracts/hello-message.js';
import { fleetGrade, viewOf } from '../../../../../hub/plugins/readiness/src/fleet-grade.js';
import { gradeDevice } from '../../../../../hub/plugins/readiness/src/grade-device.js';
import { examples } from '../../../../support/contract-examples.js';
import { DEVICE, NOW, recordedFacts } from './recorded-facts.js';

const DAY = 86_400_000;
const endingIn = (ms: number) => {
  const facts = recordedFacts();
  return recordedFacts({ registered: { ...facts.registered!, certNotAfter: new Date(NOW + ms).toISOString() } });
};

describe("a device certificate's end in readiness", () => {
  it('hello: cert_not_after is optional (a device before it still says hello) and must be a UTC timestamp', () => {
    const hello = examples.hello();
    assert.equal(HelloMessageSchema.safeParse(hello).success, true);
    assert.equal(HelloMessageSchema.safeParse({ ...hello, cert_not_after: '2027-01-01T00:00:00.000Z' }).success, true);
    assert.equal(HelloMessageSchema.safeParse({ ...hello, cert_not_after: 'next year' }).success, false);
    assert.equal(HelloMessageSchema.safeParse({ ...hello, cert_not_after: '2027-01-01T00:00:00+02:00' }).success, false);
  });

  it('30 days or more: no warning; less: a warning with the days left, the grade kept; ended: device_identity_fp not_ready', () => {
    const ready = gradeDevice(recordedFacts(), 'hub-1');
    assert.equal(ready.grade, 'ready');
    assert.equal(ready.warnings, undefined, 'a device that announced no end is not judged on it');

    const thirty = gradeDevice(endingIn(30 * DAY), 'hub-1');
    assert.equal(thirty.warnings, undefined);
    assert.equal((thirty.modules.device_identity_fp.evidence.value as { cert_days_left: number }).cert_days_left, 30);

    const soon = gradeDevice(endingIn(30 * DAY - 1), 'hub-1');
    assert.equal(soon.grade, 'ready');
    assert.equal(soon.modules.device_identity_fp.grade, 'ready');
    assert.deepEqual(soon.warnings, [
      `${DEVICE} device certificate expires in 29 days (${new Date(NOW + 30 * DAY - 1).toISOString()}): renew it with lookout certs`,
    ]);

    const ended = gradeDevice(endingIn(-1), 'hub-1');
    assert.equal(ended.grade, 'not_ready');
    assert.equal(ended.modules.device_identity_fp.grade, 'not_ready');
    assert.match(ended.modules.device_identity_fp.evidence.reason!, /^cam-1 device certificate expired on .*: its TLS surfaces are refused/);
    assert.equal(ended.warnings?.length, 1);

    // The fleet carries every device's warnings after the hub's own, its grade from the devices' grades alone.
    const fleet = fleetGrade([viewOf(soon, NOW, DAY)], [], { certificates: [], warnings: ['hub line'] });
    assert.equal(fleet.grade, 'ready');
    assert.deepEqual(fleet.warnings, ['hub line', ...soon.warnings]);
  });
});
