import { LookoutError } from 'lookout/core';

/** A row-major rows x cols matrix of costs (a flat array so a native twin can share the layout). */
export interface CostMatrix {
  rows: number;
  cols: number;
  data: ArrayLike<number>;
}

export interface Assignment {
  /** Column of each row, -1 when the row is left out (only when rows > cols). */
  rowToCol: Int32Array;
  /** Row of each column, -1 when the column is left out (only when cols > rows). */
  colToRow: Int32Array;
  total: number;
}

function checkShape(m: CostMatrix): void {
  if (!Number.isInteger(m.rows) || !Number.isInteger(m.cols) || m.rows < 0 || m.cols < 0 || m.data.length !== m.rows * m.cols) {
    throw new LookoutError('argument_invalid', `cost matrix shape ${m.rows}x${m.cols} does not fit ${m.data.length} values`);
  }
}

/**
 * Minimum-cost assignment of a rectangular matrix: every row gets a distinct column when
 * rows <= cols (else every column a distinct row). Shortest augmenting paths with dual potentials
 * (the Jonker-Volgenant / Kuhn-Munkres family), O(n^2 m) for n = min(rows, cols), m = max.
 * Every cost must be finite: gating belongs to {@link solveGatedAssignment}.
 */
export function solveLinearAssignment(m: CostMatrix): Assignment {
  checkShape(m);
  for (let k = 0; k < m.data.length; k++) {
    if (!Number.isFinite(m.data[k])) {
      throw new LookoutError('argument_invalid', `cost matrix entry ${k} is not finite (${m.data[k]})`);
    }
  }
  const transposed = m.rows > m.cols;
  const n = transposed ? m.cols : m.rows;
  const w = transposed ? m.rows : m.cols;
  const cost = transposed ? (i: number, j: number) => m.data[j * m.cols + i] : (i: number, j: number) => m.data[i * m.cols + j];

  // 1-based arrays with index 0 as the virtual start column, as in the classic formulation.
  const u = new Float64Array(n + 1);
  const v = new Float64Array(w + 1);
  const owner = new Int32Array(w + 1); // owner[j]: row (1-based) holding column j, 0 = free
  const way = new Int32Array(w + 1);
  const minv = new Float64Array(w + 1);
  const used = new Uint8Array(w + 1);

  for (let i = 1; i <= n; i++) {
    owner[0] = i;
    let j0 = 0;
    minv.fill(Infinity);
    used.fill(0);
    do {
      used[j0] = 1;
      const i0 = owner[j0];
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= w; j++) {
        if (used[j]) continue;
        const cur = cost(i0 - 1, j - 1) - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= w; j++) {
        if (used[j]) {
          u[owner[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (owner[j0] !== 0);
    // Flip the augmenting path back to the start column.
    do {
      const j1 = way[j0];
      owner[j0] = owner[j1]!;
      j0 = j1;
    } while (j0 !== 0);
  }

  const rowToCol = new Int32Array(m.rows).fill(-1);
  const colToRow = new Int32Array(m.cols).fill(-1);
  let total = 0;
  for (let j = 1; j <= w; j++) {
    const i = owner[j];
    if (i === 0) continue;
    const r = transposed ? j - 1 : i - 1;
    const c = transposed ? i - 1 : j - 1;
    rowToCol[r] = c;
    colToRow[c] = r;
    total += m.data[r * m.cols + c];
  }
  return { rowToCol, colToRow, total };
}

export interface GatedMatching {
  matches: Array<[row: number, col: number]>;
  unmatchedRows: number[];
  unmatchedCols: number[];
}

export interface GatedOptions {
  /**
   * Prefer more matches over cheaper ones (evaluation: CLEAR MOT counts every valid pair it can).
   * Off, the sum of (maxCost - cost) over matches is maximised, as ByteTrack's gated lapjv does.
   */
  maximizeMatches?: boolean;
}

/**
 * Partial assignment where a pair is admissible only when its cost is finite and <= maxCost; rows
 * and columns may stay unmatched. Reduced to a full rectangular assignment by giving each admissible
 * pair the negative benefit cost - maxCost and every other pair 0 ("not matched"): any full
 * assignment then scores exactly the partial matching of its admissible pairs. A pair costing
 * exactly maxCost adds nothing in the default mode and may be left unmatched.
 */
export function solveGatedAssignment(m: CostMatrix, maxCost: number, options: GatedOptions = {}): GatedMatching {
  checkShape(m);
  if (!Number.isFinite(maxCost)) throw new LookoutError('argument_invalid', `maxCost must be finite, got ${maxCost}`);
  const admissible = (c: number) => Number.isFinite(c) && c <= maxCost;
  let bonus = 0;
  if (options.maximizeMatches) {
    // Larger than any spread of benefits a whole matching can add up to, so one more match always wins.
    let lo = Infinity;
    for (let k = 0; k < m.data.length; k++) if (admissible(m.data[k])) lo = Math.min(lo, m.data[k]);
    bonus = Number.isFinite(lo) ? (maxCost - lo) * Math.min(m.rows, m.cols) + 1 : 0;
  }
  const reduced = new Float64Array(m.data.length);
  for (let k = 0; k < m.data.length; k++) {
    const c = m.data[k];
    reduced[k] = admissible(c) ? c - maxCost - bonus : 0;
  }
  const { rowToCol } = solveLinearAssignment({ rows: m.rows, cols: m.cols, data: reduced });
  const matches: Array<[number, number]> = [];
  const colUsed = new Uint8Array(m.cols);
  const unmatchedRows: number[] = [];
  for (let r = 0; r < m.rows; r++) {
    const c = rowToCol[r];
    if (c >= 0 && admissible(m.data[r * m.cols + c])) {
      matches.push([r, c]);
      colUsed[c] = 1;
    } else {
      unmatchedRows.push(r);
    }
  }
  const unmatchedCols: number[] = [];
  for (let c = 0; c < m.cols; c++) if (!colUsed[c]) unmatchedCols.push(c);
  return { matches, unmatchedRows, unmatchedCols };
}
