import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clipReason,
  clipText,
  clipValue,
  MAX_EVIDENCE_JSON_CHARS,
  MAX_EVIDENCE_REASON_CHARS,
  MAX_EVIDENCE_STRING_CHARS,
} from '../../../../../hub/plugins/readiness/src/clip-evidence.js';

describe('clipping device-supplied evidence', () => {
  it('keeps a value of ordinary size as it is', () => {
    const value = { listening: true, port: 8777, problem: null, peers: [{ device_id: 'cam-2', state: 'up', rtt_ms: 1.5 }] };
    assert.deepEqual(clipValue(value), value);
    assert.equal(clipValue(undefined), null);
    assert.equal(clipReason(null), null);
    assert.equal(clipReason('the sidecar is not listening'), 'the sidecar is not listening');
  });

  it('cuts long strings, long arrays, many keys and deep nesting, marking each cut', () => {
    const clipped = clipValue({
      path: 'p'.repeat(10_000),
      list: Array.from({ length: 1000 }, (_, i) => i),
      many: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i])),
      deep: JSON.parse('['.repeat(5000) + ']'.repeat(5000)) as unknown,
    }) as Record<string, unknown>;
    assert.equal((clipped.path as string).length, MAX_EVIDENCE_STRING_CHARS);
    assert.ok((clipped.path as string).endsWith('...'));
    const list = clipped.list as unknown[];
    assert.equal(list.length, 16);
    assert.equal(list.at(-1), '... 985 more');
    const many = clipped.many as Record<string, unknown>;
    assert.equal(Object.keys(many).length, 16);
    assert.equal(many['...'], 'more keys left out');
    assert.match(JSON.stringify(clipped.deep), /nested deeper than 6 levels/);
    assert.ok(JSON.stringify(clipped).length <= MAX_EVIDENCE_JSON_CHARS);
  });

  it('keeps a value whose parts are each short but whose whole is long as the start of its JSON', () => {
    const wide = Array.from({ length: 16 }, () => Array.from({ length: 16 }, () => 'z'.repeat(200)));
    const clipped = clipValue(wide);
    assert.equal(typeof clipped, 'string');
    assert.equal((clipped as string).length, MAX_EVIDENCE_JSON_CHARS);
    assert.ok((clipped as string).startsWith('[["zzz'));
  });

  it('clips a reason, and what it clipped stays as it is when clipped again', () => {
    const reason = clipReason(`peers not up: ${'cam-x down, '.repeat(10_000)}`)!;
    assert.equal(reason.length, MAX_EVIDENCE_REASON_CHARS);
    assert.equal(clipReason(reason), reason);
    const once = clipValue({ list: Array.from({ length: 100 }, (_, i) => i), keys: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])) });
    assert.deepEqual(clipValue(once), once);
  });

  it('a key named __proto__ stays a key, and a surrogate pair is never cut in half', () => {
    const clipped = clipValue(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    assert.ok(Object.hasOwn(clipped, '__proto__'));
    assert.equal(Object.getPrototypeOf(clipped), Object.prototype);
    const emoji = '\u{1F600}'.repeat(200);
    const cut = clipText(emoji, 100);
    assert.ok(!/\p{Surrogate}/u.test(cut), 'no lone surrogate');
    assert.ok(cut.endsWith('...'));
  });
});
