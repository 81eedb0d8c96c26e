import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { definePlugin, z } from 'lookout/core';
import { BUILDER_DB, BUILDER_JOBS, JOB_STATES, type BuilderDb } from './service.js';
import { appliedVersions, migrate } from './migrate.js';
import { JOBS_MIGRATIONS } from './jobs-schema.js';
import { SqliteJobStore, unknownJob } from './sqlite-job-store.js';
import { JobLogSchema, JobSchema } from './job-schema.js';

const config = z.object({
  LOOKOUT_BUILDER_DB: z.string().min(1).optional().describe('the SQLite file; default <data dir>/builder.sqlite'),
  LOOKOUT_BUILDER_JOB_LOG_LINES: z.coerce.number().int().min(100).max(1_000_000).default(20_000),
});

/**
 * The builder's state: opens the SQLite file, applies the versioned migrations, provides the database
 * to the stage plugins (each migrates its own tables) and the jobs table with its read routes.
 */
export default definePlugin({
  name: 'builder-store',
  version: '1.0.0',
  core: '^1',
  description: 'The builder state (SQLite, versioned migrations) and the jobs of training, compile and deploy',
  config,
  provides: [BUILDER_DB, BUILDER_JOBS],
  errors: [
    { code: 'job_unknown', status: 404, description: 'no builder job of that id' },
    { code: 'job_state_conflict', status: 409, description: 'the job is in a state it cannot leave that way' },
  ],
  routes: [
    {
      method: 'GET',
      path: '/api/pipeline/jobs',
      summary: 'Builder jobs, newest first',
      query: z.object({
        kind: z.string().min(1).max(64).optional(),
        state: z.enum(JOB_STATES).optional(),
        limit: z.coerce.number().int().min(1).max(1000).default(100),
      }),
      response: z.object({ jobs: z.array(JobSchema) }),
    },
    {
      method: 'GET',
      path: '/api/pipeline/jobs/:id',
      summary: 'One job: its state (poll until TRAINING_COMPLETE, COMPILE_COMPLETE, DEPLOYED or FAILED), progress and result',
      params: { id: 'the job id' },
      errors: ['job_unknown'],
      response: JobSchema,
    },
    {
      method: 'GET',
      path: '/api/pipeline/jobs/:id/logs',
      summary: "A job's log lines after `after` (its executor's output and its state changes)",
      params: { id: 'the job id' },
      query: z.object({ after: z.coerce.number().int().min(0).default(0), limit: z.coerce.number().int().min(1).max(10_000).default(1000) }),
      errors: ['job_unknown'],
      response: JobLogSchema,
    },
  ],
  start(ctx) {
    const file = resolve(ctx.config.LOOKOUT_BUILDER_DB ?? join(ctx.runtime.dataDir, 'builder.sqlite'));
    mkdirSync(dirname(file), { recursive: true });
    const db = new Database(file);
    ctx.onStop(() => db.close());
    // WAL: readers (status polls) never wait for the import that writes; NORMAL is durable at each checkpoint.
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db, 'builder-store', JOBS_MIGRATIONS);
    const builderDb: BuilderDb = { db, migrate: (owner, m) => migrate(db, owner, m), appliedVersions: () => appliedVersions(db) };
    const jobs = new SqliteJobStore(db, { maxLogLines: ctx.config.LOOKOUT_BUILDER_JOB_LOG_LINES, maxLineBytes: 4096 });
    ctx.services.provide(BUILDER_DB, builderDb);
    ctx.services.provide(BUILDER_JOBS, jobs);
    ctx.log.info({ file, schema: appliedVersions(db) }, 'builder state opened');

    ctx.routes.handle<{ kind?: string; state?: (typeof JOB_STATES)[number]; limit: number }>('GET', '/api/pipeline/jobs', ({ query }) => ({
      jobs: jobs.list(query),
    }));
    ctx.routes.handle('GET', '/api/pipeline/jobs/:id', ({ params }) => {
      const job = jobs.get(params.id);
      if (!job) throw unknownJob(params.id);
      return job;
    });
    ctx.routes.handle<{ after: number; limit: number }>('GET', '/api/pipeline/jobs/:id/logs', ({ params, query }) => ({
      job_id: params.id,
      lines: jobs.logs(params.id, query),
    }));
  },
});
