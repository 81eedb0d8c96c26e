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
  it('writes what arrives during a write in the next one, in order, within the batch bound', async () => {
    const writes: number[][] = [];
    let release: () => void = () => undefined;
    const commit = new GroupCommit<number>(async (items) => {
      writes.push(items);
      if (writes.length === 1) await new Promise<void>((r) => (release = r));
    }, 3);
    const first = commit.add(0);
    await new Promise((r) => setImmediate(r));
    // The first write is under way: these wait for the next ones.
    const rest = [1, 2, 3, 4].map((i) => commit.add(i));
    assert.equal(commit.waiting, 4);
    release();
    await Promise.all([first, ...rest]);
    assert.deepEqual(writes, [[0], [1, 2, 3], [4]]);
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
