import { serviceToken } from 'lookout/core';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The builder's state: one SQLite file (better-sqlite3) that every stage plugin keeps its tables in,
 * each under versioned migrations of its own, and the jobs table the training, compile and deploy
 * executors move through the spec's states.
 */

/** One step of a plugin's schema: applied once, in version order, inside a transaction. */
export interface Migration {
  version: number;
  name: string;
  up: string | ((db: BetterSqlite3.Database) => void);
}

export interface BuilderDb {
  readonly db: BetterSqlite3.Database;
  /** Applies the owner's migrations not applied yet; a version lower than one applied is refused. */
  migrate: (owner: string, migrations: readonly Migration[]) => void;
  /** The versions applied, per owner (for the status routes and tests). */
  appliedVersions: () => Record<string, number>;
}

export const BUILDER_DB = serviceToken<BuilderDb>('builder.db');

/** Spec 02's builder job states. Clients poll until TRAINING_COMPLETE, COMPILE_COMPLETE, DEPLOYED or FAILED. */
import { JOB_STATES } from './job-schema.js';
export { JOB_STATES };
export type JobState = (typeof JOB_STATES)[number];

/** What a job does: the stage plugin that runs it names it (train, compile, deploy, …). */
export type JobKind = string;

export interface Job {
  id: string;
  kind: JobKind;
  state: JobState;
  /** Why it FAILED (or was cancelled); null otherwise. */
  reason: string | null;
  /** 0..1 and a short note of where it is (epoch 3/25, upload 40 %). */
  progress: number;
  progress_note: string | null;
  /** The executor that runs it (local, vertex, …), once one took it. */
  executor: string | null;
  /** The job this one continues (a compile of a training job's export). */
  parent_id: string | null;
  params: Record<string, unknown>;
  result: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface JobLogLine {
  seq: number;
  at: string;
  stream: 'stdout' | 'stderr' | 'event';
  line: string;
}

export interface JobStore {
  create(kind: JobKind, params: Record<string, unknown>, options?: { parentId?: string; executor?: string }): Job;
  get(id: string): Job | undefined;
  /** Newest first. */
  list(filter?: { kind?: string; state?: JobState; limit?: number }): Job[];
  /**
   * Moves a job to `state` if the spec's order allows it (a typed 409 names both states when not);
   * FAILED needs a reason. Terminal states stamp finished_at.
   */
  transition(id: string, state: JobState, fields?: { reason?: string; result?: Record<string, unknown>; executor?: string }): Job;
  progress(id: string, progress: number, note?: string): void;
  /** Merges fields into the job's result without a state change (what a restart needs to resume it: a remote job's name). */
  remember(id: string, fields: Record<string, unknown>): void;
  log(id: string, stream: JobLogLine['stream'], line: string): void;
  logs(id: string, options?: { after?: number; limit?: number }): JobLogLine[];
  /** Jobs a restart interrupted (TRAINING, COMPILING, DEPLOYING): their executor resumes each or fails it with why. */
  interrupted(): Job[];
}

export const BUILDER_JOBS = serviceToken<JobStore>('builder.jobs');

/** The job's wire shape, for the stage plugins' route declarations. */
export { JobSchema } from './job-schema.js';
