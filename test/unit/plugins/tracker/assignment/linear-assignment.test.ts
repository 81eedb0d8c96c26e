import { seededRandom } from '../../../../../lib/random/seeded-random.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { solveGatedAssignment, solveLinearAssignment } from '../../../../../plugins/tracker/src/assignment/linear-assignment.js';
import { iou, iouMatrix } from '../../../../../plugins/tracker/src/geometry/box.js';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';

/** Every way to give each of the k = min(rows, cols) smaller-side items a distinct partner. */
function* injections(n: number, m: number, prefix: number[] = []): Generator<number[]> {
  if (prefix.length === n) {
    yield prefix;
    return;
  }
  for (let j = 0; j < m; j++) if (!prefix.includes(j)) yield* injections(n, m, [...prefix, j]);
}

function bruteForceMin(rows: number, cols: number, data: Float64Array): number {
  let best = Infinity;
  const t = rows > cols;
  const n = t ? cols : rows;
  const m = t ? rows : cols;
  for (const p of injections(n, m)) {
    let s = 0;
    p.forEach((j, i) => (s += t ? data[j * cols + i] : data[i * cols + j]));
    best = Math.min(best, s);
  }
  return best;
}

/** Best partial matching: most benefit (maxCost - cost) or, with maximizeMatches, most pairs then benefit. */
function bruteForceGated(rows: number, cols: number, data: Float64Array, maxCost: number, maximizeMatches: boolean): [number, number] {
  let best: [number, number] = [0, 0];
  const rec = (i: number, used: Set<number>, count: number, benefit: number): void => {
    if (i === rows) {
      if (maximizeMatches ? count > best[0] || (count === best[0] && benefit > best[1] + 1e-12) : benefit > best[1] + 1e-12) {
        best = [count, benefit];
      }
      return;
    }
    rec(i + 1, used, count, benefit);
    for (let j = 0; j < cols; j++) {
      const c = data[i * cols + j];
      if (used.has(j) || !Number.isFinite(c) || c > maxCost) continue;
      used.add(j);
      rec(i + 1, used, count + 1, benefit + (maxCost - c));
      used.delete(j);
    }
  };
  rec(0, new Set(), 0, 0);
  return best;
}

test('full assignment equals brute force on random rectangular matrices', () => {
  const rnd = seededRandom(42);
  for (let trial = 0; trial < 400; trial++) {
    const rows = 1 + Math.floor(rnd.next() * 6);
    const cols = 1 + Math.floor(rnd.next() * 6);
    // Integer costs make ties common, which is where a wrong augmenting step shows.
    const integer = trial % 2 === 0;
    const data = Float64Array.from({ length: rows * cols }, () => (integer ? Math.floor(rnd.range(-5, 10)) : rnd.range(-3, 7)));
    const a = solveLinearAssignment({ rows, cols, data });
    const expected = bruteForceMin(rows, cols, data);
    assert.ok(Math.abs(a.total - expected) < 1e-9, `trial ${trial} ${rows}x${cols}: ${a.total} vs ${expected}`);
    // The assignment is a proper injection and its total is what it claims.
    const k = Math.min(rows, cols);
    assert.equal([...a.rowToCol].filter((c) => c >= 0).length, k);
    assert.equal(new Set([...a.rowToCol].filter((c) => c >= 0)).size, k);
    let s = 0;
    a.rowToCol.forEach((c, r) => {
      if (c >= 0) {
        assert.equal(a.colToRow[c], r);
        s += data[r * cols + c];
      }
    });
    assert.ok(Math.abs(s - a.total) < 1e-9);
  }
});

test('gated assignment equals brute force over partial matchings, both objectives', () => {
  const rnd = seededRandom(7);
  for (let trial = 0; trial < 400; trial++) {
    const rows = 1 + Math.floor(rnd.next() * 5);
    const cols = 1 + Math.floor(rnd.next() * 5);
    const data = Float64Array.from({ length: rows * cols }, () => (rnd.chance(0.2) ? Infinity : rnd.range(0, 1)));
    const maxCost = rnd.range(0.2, 0.9);
    for (const maximizeMatches of [false, true]) {
      const g = solveGatedAssignment({ rows, cols, data }, maxCost, { maximizeMatches });
      const [count, benefit] = bruteForceGated(rows, cols, data, maxCost, maximizeMatches);
      const got = g.matches.reduce((s, [r, c]) => s + (maxCost - data[r * cols + c]), 0);
      assert.ok(Math.abs(got - benefit) < 1e-9, `trial ${trial} max=${maximizeMatches}: benefit ${got} vs ${benefit}`);
      if (maximizeMatches) assert.equal(g.matches.length, count, `trial ${trial}: match count`);
      for (const [r, c] of g.matches) assert.ok(data[r * cols + c] <= maxCost);
      assert.equal(g.matches.length + g.unmatchedRows.length, rows);
      assert.equal(g.matches.length + g.unmatchedCols.length, cols);
      assert.deepEqual(new Set([...g.matches.map(([r]) => r), ...g.unmatchedRows]).size, rows);
      assert.deepEqual(new Set([...g.matches.map(([, c]) => c), ...g.unmatchedCols]).size, cols);
    }
  }
});

test('maximizeMatches prefers two valid pairs over one excellent pair', () => {
  // g0-h0 excellent, g1-h0 and g0-h1 barely valid: benefit mode keeps the one good pair.
  const data = Float64Array.of(0.1, 0.45, 0.45, Infinity);
  assert.deepEqual(solveGatedAssignment({ rows: 2, cols: 2, data }, 0.5).matches, [[0, 0]]);
  const both = solveGatedAssignment({ rows: 2, cols: 2, data }, 0.5, { maximizeMatches: true }).matches;
  assert.deepEqual(both.sort(), [
    [0, 1],
    [1, 0],
  ]);
});

test('empty matrices and bad input', () => {
  assert.equal(solveLinearAssignment({ rows: 0, cols: 3, data: [] }).total, 0);
  assert.deepEqual(solveGatedAssignment({ rows: 2, cols: 0, data: [] }, 1), { matches: [], unmatchedRows: [0, 1], unmatchedCols: [] });
  assert.throws(
    () => solveLinearAssignment({ rows: 2, cols: 2, data: [1, 2, 3] }),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
  assert.throws(
    () => solveLinearAssignment({ rows: 1, cols: 2, data: [1, NaN] }),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
  assert.throws(
    () => solveGatedAssignment({ rows: 1, cols: 1, data: [1] }, Infinity),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
});

test('IoU of boxes', () => {
  assert.equal(iou([0, 0, 10, 10], [0, 0, 10, 10]), 1);
  assert.equal(iou([0, 0, 10, 10], [10, 0, 20, 10]), 0);
  assert.ok(Math.abs(iou([0, 0, 10, 10], [5, 0, 15, 10]) - 50 / 150) < 1e-12);
  assert.equal(iou([0, 0, 0, 10], [0, 0, 0, 10]), 0);
  assert.deepEqual(
    [
      ...iouMatrix(
        [[0, 0, 2, 2]],
        [
          [0, 0, 2, 2],
          [1, 1, 3, 3],
        ],
      ),
    ],
    [1, 1 / 7],
  );
});
