import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MirroredMessages } from '../../../../hub/src/state/mirrored-messages.js';

const m = (topic: string, n: number) => ({ topic, payload: Buffer.from(String(n)), retain: false, at: 1000 + n });

describe('MirroredMessages', () => {
  it('holds the newest message per topic, how many it replaced, in the order of the newest', () => {
    const held = new MirroredMessages();
    held.hold('d1', m('devices/d1/telemetry', 1));
    held.hold('d1', m('devices/d1/dets', 2));
    held.hold('d1', m('devices/d1/telemetry', 3));
    held.hold('d1', m('devices/d1/telemetry', 4));
    held.hold('d2', m('devices/d2/dets', 5));
    assert.equal(held.devices, 2);
    assert.equal(held.collapsed, 2);
    const d1 = held.take('d1')!;
    assert.deepEqual(
      d1.map((x) => [x.topic, x.payload.toString(), x.collapsed, x.at]),
      [
        ['devices/d1/dets', '2', 0, 1002],
        ['devices/d1/telemetry', '4', 2, 1004],
      ],
    );
    assert.equal(held.take('d1'), undefined, 'taken once');
    assert.deepEqual(held.deviceIds(), ['d2']);
    held.hold('d1', m('devices/d1/telemetry', 6));
    assert.equal(held.take('d1')![0].collapsed, 0, 'a count starts again after the device was applied');
  });
});
