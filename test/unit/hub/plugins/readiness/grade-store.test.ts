import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../../../core/src/log/logger.js';
import { MemorySharedState } from '../../../../../hub/src/state/memory-shared-state.js';
import { GradeStore, READINESS_SCOPE } from '../../../../../hub/plugins/readiness/src/grade-store.js';
import { gradeDevice } from '../../../../../hub/plugins/readiness/src/grade-device.js';
import { NOW, recordedFacts } from './recorded-facts.js';

const log = createLogger({ level: 'silent' });

describe('readiness grades in the shared state', () => {
  it('a second replica reads what the first stored', async () => {
    const shared = new MemorySharedState();
    const a = new GradeStore(shared, log);
    const b = new GradeStore(shared, log);
    await a.put(gradeDevice(recordedFacts(), 'hub-a'));
    const seen = await b.get('cam-1');
    assert.equal(seen?.grade, 'ready');
    assert.equal(seen?.checked_by, 'hub-a');
    assert.deepEqual([...(await b.all()).keys()], ['cam-1']);
  });

  it('keeps the newer of two overlapping checks of one device', async () => {
    const store = new GradeStore(new MemorySharedState(), log);
    await store.put(gradeDevice(recordedFacts({ at: NOW + 1000 }), 'hub-a'));
    await store.put(gradeDevice(recordedFacts({ at: NOW, peerHello: { absent: 'x' } }), 'hub-b'));
    const kept = await store.get('cam-1');
    assert.equal(kept?.checked_by, 'hub-a');
    assert.equal(kept?.grade, 'ready');
  });

  it('leaves out a record that does not parse (another version wrote it) instead of serving it', async () => {
    const shared = new MemorySharedState();
    await shared.put(READINESS_SCOPE, 'cam-x', { device_id: 'cam-x', grade: 'excellent' });
    await shared.put(READINESS_SCOPE, 'cam-y', gradeDevice(recordedFacts(), 'hub-a'));
    const store = new GradeStore(shared, log);
    assert.equal(await store.get('cam-x'), undefined);
    // A record under another device's key is refused too.
    assert.equal(await store.get('cam-y'), undefined);
    assert.equal((await store.all()).size, 0);
  });
});
