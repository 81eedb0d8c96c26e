import { randomUUID } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { LookoutError } from 'lookout/core';
import type { Job, JobLogLine, JobState, JobStore } from './service.js';
import { canTransition, isTerminal, RUNNING_STATES } from './job-transitions.js';

interface JobRow extends Omit<Job, 'params' | 'result'> {
  params: string;
  result: string | null;
}

export interface JobStoreLimits {
  /** Lines kept per job: older ones are dropped as new ones come (a training log can be endless). */
  maxLogLines: number;
  /** A longer line is cut (a progress bar without newlines). */
  maxLineBytes: number;
}

/** Jobs in the builder's SQLite file: every change is one statement, so a crash loses no job. */
export class SqliteJobStore implements JobStore {
  private readonly logSeq = new Map<string, number>();

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly limits: JobStoreLimits,
    private readonly now: () => Date = () => new Date(),
  ) {}

  create(kind: string, params: Record<string, unknown>, options: { parentId?: string; executor?: string } = {}): Job {
    if (options.parentId && !this.get(options.parentId)) throw unknownJob(options.parentId);
    const id = randomUUID();
    const at = this.now().toISOString();
    this.db
      .prepare(`INSERT INTO jobs (id, kind, state, params, executor, parent_id, created_at, updated_at) VALUES (?, ?, 'QUEUED', ?, ?, ?, ?, ?)`)
      .run(id, kind, JSON.stringify(params), options.executor ?? null, options.parentId ?? null, at, at);
    return this.get(id)!;
  }

  get(id: string): Job | undefined {
    const row = this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  list(filter: { kind?: string; state?: JobState; limit?: number } = {}): Job[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM jobs WHERE (@kind IS NULL OR kind = @kind) AND (@state IS NULL OR state = @state) ORDER BY created_at DESC, rowid DESC LIMIT @limit`,
      )
      .all({ kind: filter.kind ?? null, state: filter.state ?? null, limit: filter.limit ?? 100 }) as JobRow[];
    return rows.map(fromRow);
  }

  transition(id: string, state: JobState, fields: { reason?: string; result?: Record<string, unknown>; executor?: string } = {}): Job {
    const job = this.get(id);
    if (!job) throw unknownJob(id);
    if (!canTransition(job.state, state)) {
      throw new LookoutError('builder-store.job_state_conflict', `job ${id} is ${job.state}; it cannot become ${state}`, {
        details: { job_id: id, from: job.state, to: state },
      });
    }
    if (state === 'FAILED' && !fields.reason) throw new LookoutError('internal', 'a FAILED job needs its reason');
    const at = this.now().toISOString();
    this.db
      .prepare(
        `UPDATE jobs SET state = @state, reason = @reason, result = COALESCE(@result, result), executor = COALESCE(@executor, executor),
           updated_at = @at, started_at = COALESCE(started_at, CASE WHEN @running THEN @at END),
           finished_at = CASE WHEN @terminal THEN @at ELSE finished_at END,
           progress = CASE WHEN @state IN ('TRAINING_COMPLETE', 'COMPILE_COMPLETE', 'DEPLOYED') THEN 1 ELSE progress END
         WHERE id = @id`,
      )
      .run({
        id,
        state,
        reason: fields.reason ?? null,
        result: fields.result ? JSON.stringify(fields.result) : null,
        executor: fields.executor ?? null,
        at,
        running: RUNNING_STATES.includes(state) ? 1 : 0,
        terminal: isTerminal(state) ? 1 : 0,
      });
    this.log(id, 'event', state === 'FAILED' ? `FAILED: ${fields.reason}` : state);
    return this.get(id)!;
  }

  progress(id: string, progress: number, note?: string): void {
    const p = Math.min(1, Math.max(0, Number.isFinite(progress) ? progress : 0));
    const changed = this.db
      .prepare('UPDATE jobs SET progress = ?, progress_note = COALESCE(?, progress_note), updated_at = ? WHERE id = ?')
      .run(p, note ?? null, this.now().toISOString(), id).changes;
    if (changed === 0) throw unknownJob(id);
  }

  remember(id: string, fields: Record<string, unknown>): void {
    const job = this.get(id);
    if (!job) throw unknownJob(id);
    this.db
      .prepare('UPDATE jobs SET result = ?, updated_at = ? WHERE id = ?')
      .run(JSON.stringify({ ...(job.result ?? {}), ...fields }), this.now().toISOString(), id);
  }

  log(id: string, stream: JobLogLine['stream'], line: string): void {
    const seq = this.nextSeq(id);
    const text = Buffer.byteLength(line) > this.limits.maxLineBytes ? `${Buffer.from(line).subarray(0, this.limits.maxLineBytes).toString()}…` : line;
    this.db.prepare('INSERT INTO job_logs (job_id, seq, at, stream, line) VALUES (?, ?, ?, ?, ?)').run(id, seq, this.now().toISOString(), stream, text);
    // Trimmed in batches rather than per line: one DELETE per hundred lines keeps logging cheap.
    if (seq % 100 === 0) this.db.prepare('DELETE FROM job_logs WHERE job_id = ? AND seq <= ?').run(id, seq - this.limits.maxLogLines);
  }

  logs(id: string, options: { after?: number; limit?: number } = {}): JobLogLine[] {
    if (!this.get(id)) throw unknownJob(id);
    return this.db
      .prepare('SELECT seq, at, stream, line FROM job_logs WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ?')
      .all(id, options.after ?? 0, Math.min(options.limit ?? 1000, this.limits.maxLogLines)) as JobLogLine[];
  }

  interrupted(): Job[] {
    const marks = RUNNING_STATES.map(() => '?').join(', ');
    return (this.db.prepare(`SELECT * FROM jobs WHERE state IN (${marks}) ORDER BY created_at`).all(...RUNNING_STATES) as JobRow[]).map(fromRow);
  }

  private nextSeq(id: string): number {
    let seq = this.logSeq.get(id);
    if (seq === undefined) seq = (this.db.prepare('SELECT MAX(seq) AS s FROM job_logs WHERE job_id = ?').get(id) as { s: number | null }).s ?? 0;
    this.logSeq.set(id, seq + 1);
    return seq + 1;
  }
}

function fromRow(row: JobRow): Job {
  return { ...row, params: JSON.parse(row.params) as Record<string, unknown>, result: row.result ? (JSON.parse(row.result) as Record<string, unknown>) : null };
}

export function unknownJob(id: string): LookoutError {
  return new LookoutError('builder-store.job_unknown', `no job ${id}`, { details: { job_id: id } });
}
