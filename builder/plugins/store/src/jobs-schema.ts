import type { Migration } from './service.js';
import { JOB_STATES } from './service.js';

const states = JOB_STATES.map((s) => `'${s}'`).join(', ');

/** The jobs table: one row per training, compile or deploy job; its log lines beside it. */
export const JOBS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'jobs and job logs',
    up: `
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN (${states})),
        reason TEXT,
        progress REAL NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
        progress_note TEXT,
        executor TEXT,
        parent_id TEXT REFERENCES jobs(id),
        params TEXT NOT NULL,
        result TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        CHECK (state <> 'FAILED' OR reason IS NOT NULL)
      );
      CREATE INDEX jobs_by_state ON jobs(state);
      CREATE INDEX jobs_by_kind ON jobs(kind, created_at);
      CREATE TABLE job_logs (
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        at TEXT NOT NULL,
        stream TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr', 'event')),
        line TEXT NOT NULL,
        PRIMARY KEY (job_id, seq)
      );
    `,
  },
];
