import type BetterSqlite3 from 'better-sqlite3';
import { LookoutError } from 'lookout/core';
import type { DatasetSplit, DatasetState, DatasetStatus, SplitCounts, ValidationReport } from './service.js';
import { SPLITS } from './formats/source-frame.js';
import type { NormalisedBox } from './clamp-box.js';

export interface DatasetOptions {
  classes: string[];
  thermal: boolean;
  split: { train: number; val: number; test: number; seed: number };
  resplit: boolean;
  class_names?: string[];
}

export interface FrameRow {
  id: number;
  image: string;
  thermal: string | null;
  clip: string;
  source_split: DatasetSplit | null;
  width: number;
  height: number;
  sha256: string;
  boxes: (NormalisedBox & { class_id: number })[];
}

interface DatasetRow {
  name: string;
  uri: string;
  format: DatasetStatus['format'];
  ontology: string;
  options: string;
  state: DatasetState;
  reason: string | null;
  phase: string | null;
  done: number;
  total: number;
  report: string | null;
  created_at: string;
  updated_at: string;
}

/** Datasets, their frames (image, clip, split) and boxes (normalised, class ids of the dataset's ontology) in SQLite. */
export class DatasetStore {
  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  create(d: { name: string; uri: string; format: DatasetStatus['format']; ontology: string; options: DatasetOptions }): void {
    const at = this.now().toISOString();
    try {
      this.db
        .prepare(
          `INSERT INTO datasets (name, uri, format, ontology, options, state, phase, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'IMPORTING', 'listing', ?, ?)`,
        )
        .run(d.name, d.uri, d.format, d.ontology, JSON.stringify(d.options), at, at);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new LookoutError('dataset.dataset_exists', `a dataset "${d.name}" exists; delete it first or choose another name`, {
          details: { dataset: d.name },
        });
      }
      throw err;
    }
  }

  options(name: string): DatasetOptions {
    return JSON.parse(this.row(name).options) as DatasetOptions;
  }

  progress(name: string, phase: string, done: number, total: number): void {
    this.db
      .prepare('UPDATE datasets SET phase = ?, done = ?, total = ?, updated_at = ? WHERE name = ?')
      .run(phase, done, total, this.now().toISOString(), name);
  }

  /** Frames and their boxes, in one transaction per batch. */
  insertFrames(name: string, frames: readonly FrameRow[]): void {
    const frame = this.db.prepare(
      'INSERT INTO dataset_frames (dataset, id, image, thermal, clip, source_split, width, height, sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const box = this.db.prepare('INSERT INTO dataset_boxes (dataset, frame, class_id, cx, cy, w, h) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      for (const f of frames) {
        frame.run(name, f.id, f.image, f.thermal, f.clip, f.source_split, f.width, f.height, f.sha256);
        for (const b of f.boxes) box.run(name, f.id, b.class_id, b.cx, b.cy, b.w, b.h);
      }
    })();
  }

  /** Sets each clip's split; with `keepSource`, frames keep the split their export gave them. */
  applySplit(name: string, assignment: ReadonlyMap<string, DatasetSplit>, keepSource: boolean): void {
    this.db.transaction(() => {
      if (keepSource) {
        this.db.prepare('UPDATE dataset_frames SET split = source_split WHERE dataset = ?').run(name);
        return;
      }
      const set = this.db.prepare('UPDATE dataset_frames SET split = ? WHERE dataset = ? AND clip = ?');
      for (const [clip, split] of assignment) set.run(split, name, clip);
    })();
  }

  finish(name: string, report: ValidationReport): void {
    this.db
      .prepare(`UPDATE datasets SET state = 'READY', phase = 'done', report = ?, updated_at = ? WHERE name = ?`)
      .run(JSON.stringify(report), this.now().toISOString(), name);
  }

  /** FAILED with why; the frames of the failed import go (no half-imported dataset is trained on). */
  fail(name: string, reason: string): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM dataset_frames WHERE dataset = ?').run(name);
      this.db.prepare(`UPDATE datasets SET state = 'FAILED', reason = ?, updated_at = ? WHERE name = ?`).run(reason, this.now().toISOString(), name);
    })();
  }

  /** Imports a restart cut off: they cannot resume from a stream, so they fail with why. */
  failInterrupted(): string[] {
    const names = (this.db.prepare(`SELECT name FROM datasets WHERE state = 'IMPORTING'`).all() as { name: string }[]).map((r) => r.name);
    for (const n of names) this.fail(n, 'the builder restarted during the import; delete the dataset and import it again');
    return names;
  }

  delete(name: string): void {
    this.row(name);
    this.db.prepare('DELETE FROM datasets WHERE name = ?').run(name);
  }

  names(): string[] {
    return (this.db.prepare('SELECT name FROM datasets ORDER BY created_at, name').all() as { name: string }[]).map((r) => r.name);
  }

  status(name: string): DatasetStatus | undefined {
    const row = this.db.prepare('SELECT * FROM datasets WHERE name = ?').get(name) as DatasetRow | undefined;
    if (!row) return undefined;
    const options = JSON.parse(row.options) as DatasetOptions;
    const label = (id: number) => options.classes[id] ?? `#${id}`;
    const splits = Object.fromEntries(SPLITS.map((s) => [s, { frames: 0, clips: 0, boxes: 0, classes: {} } satisfies SplitCounts])) as Record<
      DatasetSplit,
      SplitCounts
    >;
    const perSplit = this.db
      .prepare('SELECT split, COUNT(*) AS frames, COUNT(DISTINCT clip) AS clips FROM dataset_frames WHERE dataset = ? AND split IS NOT NULL GROUP BY split')
      .all(name) as { split: DatasetSplit; frames: number; clips: number }[];
    for (const r of perSplit) Object.assign(splits[r.split], { frames: r.frames, clips: r.clips });
    const perClass = this.db
      .prepare(
        `SELECT f.split AS split, b.class_id AS class_id, COUNT(*) AS boxes FROM dataset_boxes b JOIN dataset_frames f ON f.dataset = b.dataset AND f.id = b.frame
         WHERE b.dataset = ? AND f.split IS NOT NULL GROUP BY f.split, b.class_id`,
      )
      .all(name) as { split: DatasetSplit; class_id: number; boxes: number }[];
    for (const r of perClass) {
      splits[r.split].boxes += r.boxes;
      splits[r.split].classes[label(r.class_id)] = r.boxes;
    }
    const totals = this.db
      .prepare(
        `SELECT b.class_id AS class_id, COUNT(*) AS boxes, COUNT(DISTINCT b.frame) AS frames, COUNT(DISTINCT f.clip) AS clips
         FROM dataset_boxes b JOIN dataset_frames f ON f.dataset = b.dataset AND f.id = b.frame WHERE b.dataset = ? GROUP BY b.class_id`,
      )
      .all(name) as { class_id: number; boxes: number; frames: number; clips: number }[];
    return {
      name: row.name,
      uri: row.uri,
      format: row.format,
      ontology: row.ontology,
      classes: options.classes,
      thermal: options.thermal,
      state: row.state,
      reason: row.reason,
      progress: { phase: row.phase, done: row.done, total: row.total },
      splits,
      class_counts: Object.fromEntries(totals.map((t) => [label(t.class_id), { boxes: t.boxes, frames: t.frames, clips: t.clips }])),
      report: row.report ? (JSON.parse(row.report) as ValidationReport) : null,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  /** Frames with their boxes, by id, optionally of one split. */
  frames(
    name: string,
    q: { split?: DatasetSplit; offset: number; limit: number },
  ): (Omit<FrameRow, 'boxes' | 'sha256'> & { split: DatasetSplit | null; boxes: (NormalisedBox & { class_id: number; class: string })[] })[] {
    const options = this.options(name);
    const rows = this.db
      .prepare(
        'SELECT id, image, thermal, clip, split, source_split, width, height FROM dataset_frames WHERE dataset = @name AND (@split IS NULL OR split = @split) ORDER BY id LIMIT @limit OFFSET @offset',
      )
      .all({ name, split: q.split ?? null, limit: q.limit, offset: q.offset }) as (Omit<FrameRow, 'boxes' | 'sha256'> & { split: DatasetSplit | null })[];
    const boxes = this.db.prepare('SELECT class_id, cx, cy, w, h FROM dataset_boxes WHERE dataset = ? AND frame = ? ORDER BY rowid');
    return rows.map((r) => ({
      ...r,
      boxes: (boxes.all(name, r.id) as (NormalisedBox & { class_id: number })[]).map((b) => ({ ...b, class: options.classes[b.class_id] ?? `#${b.class_id}` })),
    }));
  }

  private row(name: string): DatasetRow {
    const row = this.db.prepare('SELECT * FROM datasets WHERE name = ?').get(name) as DatasetRow | undefined;
    if (!row) throw new LookoutError('dataset.dataset_unknown', `no dataset "${name}"`, { details: { dataset: name } });
    return row;
  }
}
