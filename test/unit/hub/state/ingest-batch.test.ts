import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GroupCommit, packMessages, unpackMessages } from '../../../../hub/src/state/ingest-batch.js';

describe('packed ingest entries', () => {
  it('give back every message as it was: topic, payload bytes, retain, received time', () => {
    const messages = [
      { topic: 'devices/cam-1/telemetry', payload: Buffer.from('{"fps":10}'), retain: false, at: 1_764_000_000_123 },
      { topic: 'devices/caméra-2/status', payload: Buffer.from([0, 255, 10, 13]), retain: true, at: 1 },
      { topic: 'devices/cam-3/dets', payload: Buffer.alloc(0), retain: false, at: 0 },
    ];
    const back = unpackMessages(packMessages(messages));
    assert.deepEqual(
      back.map((m) => ({ ...m, payload: Buffer.from(m.payload) })),
      messages,
    );
    assert.deepEqual(unpackMessages(packMessages([])), []);
  });

  it('refuse a truncated entry with a RangeError instead of inventing messages', () => {
    const packed = packMessages([{ topic: 'devices/cam-1/telemetry', payload: Buffer.from('{"fps":10}'), retain: false, at: 5 }]);
    for (const cut of [1, 5, packed.length - 1]) assert.throws(() => unpackMessages(packed.subarray(0, cut)), RangeError, `cut at ${cut}`);
  });

  it('refuse a received time that is not one, or a retain flag other than 0 and 1', () => {
    const packed = packMessages([{ topic: 't', payload: Buffer.from('{}'), retain: false, at: 5 }]);
    const timeAt = packed.length - 8;
    for (const bad of [NaN, -1, Infinity]) {
      const copy = Buffer.from(packed);
      copy.writeDoubleBE(bad, timeAt);
      assert.throws(() => unpackMessages(copy), RangeError, String(bad));
    }
    const flag = Buffer.from(packed);
    flag.writeUInt8(7, timeAt - 1);
    assert.throws(() => unpackMessages(flag), RangeError);
  });
});

describe('GroupCommit', () => {
  it('writes what arrives during a write at once, in order, within the batch bound: each item resolves with its own write', async () => {
    const writes: number[][] = [];
    let release: () => void = () => undefined;
    const commit = new GroupCommit<number>(async (items) => {
      writes.push(items);
      if (writes.length === 1) await new Promise<void>((r) => (release = r));
    }, 3);
    let firstDone = false;
    const first = commit.add(0).then(() => (firstDone = true));
    await new Promise((r) => setImmediate(r));
    // The first write is under way and has not answered: these do not wait for it.
    const rest = [1, 2, 3, 4].map((i) => commit.add(i));
    assert.equal(commit.waiting, 4);
    await Promise.all(rest);
    assert.equal(firstDone, false, 'the first write still has not answered');
    assert.deepEqual(writes, [[0], [1, 2, 3], [4]]);
    release();
    await first;
  });

  it('sends at most maxInFlight writes before one answers; the rest wait, in order', async () => {
    const writes: number[][] = [];
    const releases: (() => void)[] = [];
    const commit = new GroupCommit<number>(
      (items) => {
        writes.push(items);
        return new Promise<void>((r) => releases.push(r));
      },
      1,
      2,
    );
    const all = [0, 1, 2, 3].map((i) => commit.add(i));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(writes, [[0], [1]]);
    assert.equal(commit.writing, 2);
    assert.equal(commit.waiting, 2);
    releases[0]();
    await all[0];
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(writes, [[0], [1], [2]]);
    assert.equal(commit.waiting, 1);
    releases[1]();
    await all[1];
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(writes, [[0], [1], [2], [3]]);
    releases.forEach((r) => r());
    await Promise.all(all);
  });

  it('rejects every item of a failed write, and goes on with the next', async () => {
    let fail = true;
    const written: number[] = [];
    const commit = new GroupCommit<number>((items) => {
      if (fail) {
        fail = false;
        return Promise.reject(new Error('redis away'));
      }
      written.push(...items);
      return Promise.resolve();
    }, 10);
    const a = commit.add(1);
    const b = commit.add(2);
    await assert.rejects(a, /redis away/);
    await assert.rejects(b, /redis away/);
    await commit.add(3);
    assert.deepEqual(written, [3]);
  });
});
