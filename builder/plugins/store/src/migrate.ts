import type BetterSqlite3 from 'better-sqlite3';
import { LookoutError } from 'lookout/core';
import type { Migration } from './service.js';

const LEDGER = `CREATE TABLE IF NOT EXISTS schema_migrations (
  owner TEXT NOT NULL,
  version INTEGER NOT NULL,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  PRIMARY KEY (owner, version)
)`;

/**
 * Applies an owner's migrations that the ledger does not list, each in a transaction with its ledger
 * row, so that a crash leaves a migration applied and recorded, or neither. A database written by a
 * newer builder (a version past the newest known) is refused rather than misread.
 */
export function migrate(db: BetterSqlite3.Database, owner: string, migrations: readonly Migration[]): void {
  db.exec(LEDGER);
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (m.version !== i + 1) throw new LookoutError('internal', `${owner}: migration versions must be 1, 2, 3…; found ${m.version} at ${i + 1}`);
  });
  const current = (db.prepare('SELECT MAX(version) AS v FROM schema_migrations WHERE owner = ?').get(owner) as { v: number | null }).v ?? 0;
  if (current > sorted.length) {
    throw new LookoutError(
      'config_invalid',
      `the builder database has ${owner} schema version ${current}, newer than this builder knows (${sorted.length}); run the newer builder or another data dir`,
      { details: { owner, version: current, known: sorted.length } },
    );
  }
  const record = db.prepare('INSERT INTO schema_migrations (owner, version, name, applied_at) VALUES (?, ?, ?, ?)');
  for (const m of sorted.slice(current)) {
    db.transaction(() => {
      if (typeof m.up === 'string') db.exec(m.up);
      else m.up(db);
      record.run(owner, m.version, m.name, new Date().toISOString());
    })();
  }
}

export function appliedVersions(db: BetterSqlite3.Database): Record<string, number> {
  db.exec(LEDGER);
  const rows = db.prepare('SELECT owner, MAX(version) AS v FROM schema_migrations GROUP BY owner').all() as { owner: string; v: number }[];
  return Object.fromEntries(rows.map((r) => [r.owner, r.v]));
}
