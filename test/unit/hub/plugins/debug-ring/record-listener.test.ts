import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryDebugRing } from '../../../../../hub/plugins/debug-ring/src/debug-ring.js';
import type { DebugEventInput } from '../../../../../hub/plugins/debug-ring/src/service.js';

describe('debug ring record listeners (what the fleet history keeps audits from)', () => {
  it('sees every record past the repeat bound and the capacity, but no ingest and no restored event', () => {
    const ring = new MemoryDebugRing(3, { now: () => 5000, repeats: { burst: 2, perSecond: 0.001 } });
    ring.restore([{ kind: 'svc_agent', device_id: 'a', message: 'before the restart', ms: 1000 }]);
    const seen: [DebugEventInput, number][] = [];
    const off = ring.onRecord((e, at) => seen.push([e, at]));
    for (let i = 0; i < 10; i++) ring.record({ kind: 'svc_agent', device_id: 'a', message: `step ${i}` });
    ring.record({ kind: 'ingest', device_id: 'a', topic: 'devices/a/dets', message: 'dets' });
    ring.ingest('a', 'devices/a/dets', 'dets', 5000);
    ring.record({ kind: 'remediation', device_id: 'b', message: 'dated' }, 4000);

    // The ring kept two of a's ten (its repeat bound) in a lane of three; the listener saw all ten.
    assert.equal(ring.query({ kinds: ['svc_agent'], device: 'a', limit: 100 }).events.filter((e) => !e.restored).length, 2);
    assert.deepEqual(
      seen.map(([e, at]) => [e.kind, e.message, at]),
      [...Array.from({ length: 10 }, (_, i) => ['svc_agent', `step ${i}`, 5000]), ['remediation', 'dated', 4000]],
    );
    off();
    ring.record({ kind: 'svc_agent', device_id: 'c', message: 'after removal' });
    assert.equal(seen.length, 11);
  });

  it('records the event when a listener throws', () => {
    const ring = new MemoryDebugRing(10);
    ring.onRecord(() => {
      throw new Error('listener broken');
    });
    ring.record({ kind: 'provision', device_id: 'a', message: 'kept' });
    assert.deepEqual(
      ring.query({ kinds: ['provision'], limit: 10 }).events.map((e) => e.message),
      ['kept'],
    );
  });
});
