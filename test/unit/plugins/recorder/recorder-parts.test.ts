/** The recorder's small rules: chunk names, justification and the advice of get_recording_status. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHUNK_NAME_PATTERN } from '../../../../core/src/contracts/index.js';
import { chunkName, parseChunkName } from '../../../../plugins/recorder/src/chunk-files.js';
import { justification, summarize } from '../../../../plugins/recorder/src/detection-log.js';
import { recommendation, type RecommendationInputs } from '../../../../plugins/recorder/src/recommendation.js';

describe('chunk names', () => {
  it('carry the start time and sequence, match the wire pattern and sort by time', () => {
    const at = Date.parse('2026-03-01T10:00:01.234Z');
    const name = chunkName(at, 42);
    assert.equal(name, '20260301T100001234Z_000042.h265');
    assert.match(name, CHUNK_NAME_PATTERN);
    assert.deepEqual(parseChunkName(name), { startedAtMs: at, seq: 42 });
    assert.ok(chunkName(at, 999) < chunkName(at + 1, 0));
    assert.equal(parseChunkName('clip.h265'), undefined);
  });
});

describe('justification', () => {
  const line = (dets: { c: number; p: number; track_id?: number }[]) => ({ t: 1, dets });
  const gates = { person: 0.35, weapon: 0.5 };
  const rule = '(gates: person >= 0.35, weapon >= 0.5)';
  it('a person at its gate, or a weapon class at its gate, justifies; doubtful ones do not; the reason names both gates', () => {
    assert.equal(justification(summarize([line([{ c: 0, p: 0.34 }])], 0.35), gates), null);
    assert.equal(justification(summarize([line([{ c: 0, p: 0.35 }])], 0.35), gates), `person 0.35 ${rule}`);
    assert.equal(justification(summarize([line([{ c: 11, p: 0.4 }])], 0.35), gates), null, 'a knife at 0.40 is under the weapon gate');
    assert.equal(justification(summarize([line([{ c: 11, p: 0.5 }])], 0.35), gates), `weapon: knife 0.50 ${rule}`);
    assert.equal(
      justification(summarize([line([{ c: 11, p: 0.4 }])], 0.35), { person: 0.35, weapon: 0.3 }),
      'weapon: knife 0.40 (gates: person >= 0.35, weapon >= 0.3)',
    );
    assert.equal(justification(summarize([line([{ c: 2, p: 0.99 }])], 0.35), gates), null);
  });
  it('summarizes per class the most in one result, the best confidence and the tracks', () => {
    const s = summarize(
      [
        line([
          { c: 0, p: 0.9, track_id: 3 },
          { c: 0, p: 0.2, track_id: 4 },
        ]),
        line([]),
        line([{ c: 2, p: 0.5, track_id: 1 }]),
      ],
      0.35,
    );
    assert.deepEqual(s, {
      frames_with_detections: 2,
      person_max_count: 1,
      classes: { '0': { label: 'person', max_count: 2, max_confidence: 0.9 }, '2': { label: 'car', max_count: 1, max_confidence: 0.5 } },
      track_ids: [1, 3, 4],
    });
  });
});

describe('get_recording_status advice', () => {
  const now = Date.parse('2026-03-01T10:00:00Z');
  const fine: RecommendationInputs = {
    isWriting: true,
    lastWriteAtMs: now - 100,
    startedAtMs: now - 60_000,
    nowMs: now,
    stallMs: 10_000,
    encoderRunning: true,
    encoderExit: null,
    writeError: null,
    storage: { health: 'OK', free_gb: 10, total_gb: 20, used_pct: 50 },
    storageError: null,
  };
  it('is empty when recording is fine', () => assert.equal(recommendation(fine), ''));
  it('names the stall, since when and the encoder’s exit', () => {
    const r = recommendation({
      ...fine,
      isWriting: false,
      lastWriteAtMs: now - 30_000,
      encoderRunning: false,
      encoderExit: { at: new Date(now - 29_000).toISOString(), message: 'code 1: Invalid argument' },
    });
    assert.equal(r, 'recording stalled since 2026-03-01T09:59:30.000Z: encoder exited with code 1: Invalid argument');
  });
  it('says CRITICAL storage with what to do, after the stall', () => {
    const r = recommendation({
      ...fine,
      isWriting: false,
      lastWriteAtMs: now - 30_000,
      writeError: { at: new Date(now - 20_000).toISOString(), message: 'ENOSPC: no space left on device' },
      storage: { health: 'CRITICAL', free_gb: 0, total_gb: 20, used_pct: 100 },
    });
    assert.equal(
      r,
      'recording stalled since 2026-03-01T09:59:30.000Z: chunk writes fail (ENOSPC: no space left on device); storage CRITICAL: prune or replace the disk (100% used, 0 GB free)',
    );
  });
  it('does not call a fresh start stalled', () =>
    assert.equal(recommendation({ ...fine, isWriting: false, lastWriteAtMs: null, startedAtMs: now - 1000 }), ''));
});
