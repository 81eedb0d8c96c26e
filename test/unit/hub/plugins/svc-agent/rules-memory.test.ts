import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentMemory } from '../../../../../hub/plugins/svc-agent/src/agent-memory.js';
import { callerMayMutate, refusal } from '../../../../../hub/plugins/svc-agent/src/policy.js';
import { resolveByRules } from '../../../../../hub/plugins/svc-agent/src/rules.js';

describe('svc-agent rules', () => {
  const ids = ['cam-1', 'cam-12', 'door'];
  it('names the tool the words point at and the devices the text names, whole ids only', () => {
    assert.deepEqual(resolveByRules('is anyone at cam-12?', ids, 50), {
      steps: [{ device: 'cam-12', tool: 'conversational_safety_query', arguments: { question: 'is anyone at cam-12?' } }],
    });
    assert.deepEqual(resolveByRules('recording of door', ids, 50), { steps: [{ device: 'door', tool: 'get_recording_status', arguments: {} }] });
  });
  it('takes every device for "all cameras", bounded, and refuses what it cannot resolve', () => {
    const all = resolveByRules('health of all cameras', ids, 2);
    assert.ok('steps' in all);
    assert.deepEqual(
      all.steps.map((s) => s.device),
      ['cam-1', 'cam-12'],
    );
    assert.ok('unresolved' in resolveByRules('health please', ids, 50));
    assert.ok('unresolved' in resolveByRules('sing a song at cam-1', ids, 50));
  });
  it('never infers a mutating tool', () => {
    const r = resolveByRules('set the profile of cam-1 to 5 fps', ids, 50);
    assert.ok('steps' in r);
    assert.equal(r.steps[0].tool, 'get_camera_profile');
  });
});

describe('svc-agent policy', () => {
  it('runs read-only tools always, mutating ones approved and with the token', () => {
    assert.equal(refusal(true, false, false), null);
    assert.match(refusal(false, false, true)!, /approved plan/);
    assert.match(refusal(false, true, false)!, /approval token/);
    assert.equal(refusal(false, true, true), null);
  });
  it('compares the approval token exactly, and refuses without one configured', () => {
    assert.equal(callerMayMutate('s'.repeat(20), 's'.repeat(20)), true);
    assert.equal(callerMayMutate('s'.repeat(20), 's'.repeat(19)), false);
    assert.equal(callerMayMutate(undefined, 'anything'), false);
    assert.equal(callerMayMutate('s'.repeat(20), ['s'.repeat(20)]), false);
  });
});

describe('svc-agent memory', () => {
  it('refuses past its bounds without dropping, deletes by id or scope, and restores', () => {
    let changes = 0;
    const m = new AgentMemory({ notesPerScope: 2, scopes: 2 }, () => changes++);
    const now = new Date(0);
    const a = m.add('a', 'fleet', 'one', now);
    m.add('a', 'fleet', 'two', now);
    assert.throws(() => m.add('a', 'fleet', 'three', now), { code: 'svc-agent.memory_full' });
    m.add('b', 'device:cam-1', 'x', now);
    assert.throws(() => m.add('c', 'fleet', 'y', now), { code: 'svc-agent.memory_full' });
    assert.equal(m.remove('a', 'fleet', a.id), 1);
    assert.deepEqual(
      m.list('a', 'fleet').map((n) => n.text),
      ['two'],
    );
    assert.equal(m.remove('b', 'device:cam-1', undefined), 1);
    m.add('c', 'fleet', 'y', now);
    const copy = new AgentMemory({ notesPerScope: 2, scopes: 2 }, () => undefined);
    copy.restore(m.snapshot());
    assert.deepEqual(copy.snapshot(), m.snapshot());
    assert.equal(changes, 6);
  });
});
