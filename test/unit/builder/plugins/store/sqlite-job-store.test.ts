import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteJobStore } from '../../../../../builder/plugins/store/src/sqlite-job-store.js';
import { migrate, appliedVersions } from '../../../../../builder/plugins/store/src/migrate.js';
import { JOBS_MIGRATIONS } from '../../../../../builder/plugins/store/src/jobs-schema.js';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { registerPluginErrors } from '../../../../../core/src/errors/error-table.js';
import store from '../../../../../builder/plugins/store/src/index.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

registerPluginErrors(store.name, store.errors ?? []);

function open(file: string): { db: Database.Database; jobs: SqliteJobStore } {
  const db = new Database(file);
  // As the store plugin opens it.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  migrate(db, 'builder-store', JOBS_MIGRATIONS);
  return { db, jobs: new SqliteJobStore(db, { maxLogLines: 150, maxLineBytes: 32 }) };
}

test('jobs: the spec states in order, FAILED with its reason, logs bounded; all of it in the file after reopening', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-jobs-');
  t.after(cleanup);
  const file = join(dir, 'b.sqlite');
  let { db, jobs } = open(file);
  const train = jobs.create('train', { epochs: 25, batch_size: 8, gpu_type: 'NVIDIA_TESLA_T4' });
  assert.equal(train.state, 'QUEUED');
  jobs.transition(train.id, 'TRAINING', { executor: 'local' });
  jobs.progress(train.id, 0.4, 'epoch 10/25');
  for (let i = 0; i < 400; i++) jobs.log(train.id, 'stdout', `line ${i} ${'x'.repeat(40)}`);
  const refused = (() => {
    try {
      jobs.transition(train.id, 'DEPLOYED');
    } catch (err) {
      return err;
    }
  })();
  assert.ok(isLookoutError(refused, 'builder-store.job_state_conflict'));
  assert.equal(refused.status, 409);
  assert.throws(() => jobs.transition(train.id, 'FAILED'), /reason/);
  const done = jobs.transition(train.id, 'TRAINING_COMPLETE', { result: { onnx: 'best.onnx', input_shape: [1, 3, 544, 544] } });
  assert.equal(done.progress, 1);
  assert.ok(done.started_at && !done.finished_at, 'a completed stage may go on to compile');
  const compile = jobs.create('compile', { target: 'qnn_dlc' }, { parentId: train.id });
  jobs.transition(compile.id, 'COMPILING');
  jobs.transition(compile.id, 'FAILED', { reason: 'compile service unreachable' });
  assert.ok(
    isLookoutError(
      (() => {
        try {
          jobs.create('compile', {}, { parentId: 'nope' });
        } catch (e) {
          return e;
        }
      })(),
      'builder-store.job_unknown',
    ),
  );
  db.close();

  ({ db, jobs } = open(file));
  t.after(() => db.close());
  const again = jobs.get(train.id)!;
  assert.equal(again.state, 'TRAINING_COMPLETE');
  assert.equal(again.executor, 'local');
  assert.equal(again.progress_note, 'epoch 10/25');
  assert.deepEqual(again.result, { onnx: 'best.onnx', input_shape: [1, 3, 544, 544] });
  const failed = jobs.get(compile.id)!;
  assert.equal(failed.state, 'FAILED');
  assert.equal(failed.reason, 'compile service unreachable');
  assert.ok(failed.finished_at);
  assert.equal(failed.parent_id, train.id);
  const lines = [];
  for (let page = jobs.logs(train.id); page.length > 0; page = jobs.logs(train.id, { after: page.at(-1)!.seq })) {
    assert.ok(page.length <= 150, 'a page holds at most the lines kept');
    lines.push(...page);
  }
  assert.ok(lines.length <= 250 && lines.length >= 150, `${lines.length} lines kept`);
  assert.equal(lines.at(-1)!.line, 'TRAINING_COMPLETE');
  assert.ok(
    lines.every((l) => Buffer.byteLength(l.line) <= 32 + 3),
    'long lines are cut',
  );
  assert.deepEqual(
    jobs.list().map((j) => j.kind),
    ['compile', 'train'],
  );
  assert.deepEqual(jobs.interrupted(), []);
  const running = jobs.create('train', {});
  jobs.transition(running.id, 'TRAINING');
  assert.deepEqual(
    jobs.interrupted().map((j) => j.id),
    [running.id],
  );
  assert.deepEqual(appliedVersions(db), { 'builder-store': 1 });
});

test('migrations: applied once each, in order; a database from a newer builder is refused', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-jobs-');
  t.after(cleanup);
  const db = new Database(join(dir, 'm.sqlite'));
  t.after(() => db.close());
  const steps = [
    { version: 1, name: 'a', up: 'CREATE TABLE a (x INTEGER)' },
    { version: 2, name: 'b', up: 'ALTER TABLE a ADD COLUMN y TEXT' },
  ];
  migrate(db, 'p', steps.slice(0, 1));
  migrate(db, 'p', steps);
  migrate(db, 'p', steps);
  assert.deepEqual(appliedVersions(db), { p: 2 });
  assert.throws(() => migrate(db, 'p', steps.slice(0, 1)), /newer than this builder knows/);
  // A failing step leaves neither its change nor its ledger row.
  assert.throws(() => migrate(db, 'p', [...steps, { version: 3, name: 'c', up: 'CREATE TABLE c (x); SELECT nope FROM nowhere' }]));
  assert.deepEqual(appliedVersions(db), { p: 2 });
  assert.equal((db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'c'").get() as { n: number }).n, 0);
});
