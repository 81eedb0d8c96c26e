import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../../../core/src/paths/package-root.js';
import { CanAggregate } from '../../../../plugins/can/src/can-aggregate.js';
import { parseCandumpLine } from '../../../../plugins/can/src/candump-line.js';

const RECORDING = join(packageRoot(), 'test', 'fixtures', 'can', 'j1939-truck.candump');

describe('candump log lines', () => {
  it('reads extended, standard, remote, error and CAN FD frames', () => {
    const f = parseCandumpLine('(1764201600.000100) can0 0CF00400#F0AFA5E02EFFFFFF')!;
    assert.deepEqual(
      [f.time, f.iface, f.id, f.extended, f.error, f.remote, [...f.data]],
      [1764201600.0001, 'can0', 0x0cf00400, true, false, false, [0xf0, 0xaf, 0xa5, 0xe0, 0x2e, 0xff, 0xff, 0xff]],
    );
    const s = parseCandumpLine('(1.5) vcan0 123#DEADBEEF')!;
    assert.deepEqual([s.id, s.extended, s.data.length], [0x123, false, 4]);
    assert.equal(parseCandumpLine('(1.5) can0 18EA00F9#R')!.remote, true);
    const e = parseCandumpLine('(1.5) can0 20000004#0004000000000000')!;
    assert.deepEqual([e.error, e.id], [true, 4]);
    assert.equal(parseCandumpLine('(1.5) can0 18FEF100##1' + '00'.repeat(12))!.data.length, 12);
  });

  it('anything else is not a frame: null, not a throw', () => {
    for (const line of [
      '',
      '# comment',
      'can0  0CF00400   [8]  F0 AF',
      '(1.5) can0 0CF00400#F0A',
      '(1.5) can0 12345#00',
      `(1.5) can0 0CF00400#${'00'.repeat(300)}`,
    ]) {
      assert.equal(parseCandumpLine(line), null, line);
    }
  });
});

describe('the aggregate: latest value per group and source, bounded', () => {
  it('the recorded truck log: the latest EEC1 of each source, every group counted by kind', async () => {
    const agg = new CanAggregate();
    for (const line of (await readFile(RECORDING, 'utf8')).split('\n')) {
      const f = parseCandumpLine(line);
      if (f) agg.add(f);
    }
    assert.equal(agg.pending, true);
    const { frames, unknown_pgns } = agg.take(1764201601_000, 30_000);
    assert.deepEqual(
      frames.map((f) => [f.name, f.pgn, f.source_address, f.count]),
      [
        ['EEC1', 61444, 0, 2],
        ['EEC1', 61444, 1, 1],
        ['VD', 65248, 0, 1],
        ['HOURS', 65253, 0, 1],
        ['ET1', 65262, 0, 1],
        ['CCVS1', 65265, 0, 1],
        ['DD', 65276, 0x17, 1],
      ],
    );
    assert.equal(frames[0].value.engine_speed, 1600, 'the latest of the two');
    assert.deepEqual(frames[1].value, { driver_demand_torque: 50, actual_engine_torque: 40 }, 'a missing field is left out of value');
    assert.deepEqual(unknown_pgns, [59904, 65280]);
    assert.deepEqual(agg.counters, { frames: 12, decoded: 8, unknown: 2, standard: 1, error_frames: 1, remote: 0, dropped: 0 });
    assert.equal(agg.pending, false);
    // The next message holds the values (counts 0) until they are stale, then forgets them.
    assert.deepEqual(
      agg.take(1764201601_000, 30_000).frames.map((f) => f.count),
      [0, 0, 0, 0, 0, 0, 0],
    );
    assert.equal(agg.take(1764201700_000, 30_000).frames.length, 0);
  });

  it('holds at most maxGroups entries: a flood of distinct sources is counted as dropped', () => {
    const agg = new CanAggregate(4);
    for (let sa = 0; sa < 200; sa++)
      agg.add({ time: 1, iface: 'can0', id: 0x0cf00400 | sa, extended: true, error: false, remote: false, data: new Uint8Array(8) });
    assert.equal(agg.take(1000, 30_000).frames.length, 4);
    assert.equal(agg.counters.dropped, 196);
  });
});
