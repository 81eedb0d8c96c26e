import type BetterSqlite3 from 'better-sqlite3';
import type { Migration } from 'lookout/builder-plugins/store';
import type { PackageRecord } from './service.js';

export const PACKAGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'packages',
    up: `CREATE TABLE packages (
      id TEXT PRIMARY KEY,
      version TEXT NOT NULL UNIQUE,
      file_name TEXT NOT NULL,
      path TEXT NOT NULL,
      sha256 TEXT NOT NULL,
      bytes INTEGER NOT NULL,
      model_file TEXT NOT NULL,
      backend TEXT NOT NULL,
      input_shape TEXT NOT NULL,
      ontology TEXT NOT NULL,
      ontology_hash TEXT NOT NULL,
      labels_version TEXT NOT NULL,
      train_job_id TEXT,
      compile_job_id TEXT,
      created_at TEXT NOT NULL
    )`,
  },
];

type Row = Omit<PackageRecord, 'input_shape'> & { input_shape: string };
const fromRow = (r: Row): PackageRecord => ({ ...r, input_shape: JSON.parse(r.input_shape) as PackageRecord['input_shape'] });

/** Every package built, never deleted: what ran where is answered from these. */
export class PackageStore {
  constructor(private readonly db: BetterSqlite3.Database) {}

  insert(p: PackageRecord): void {
    this.db
      .prepare(
        `INSERT INTO packages (id, version, file_name, path, sha256, bytes, model_file, backend, input_shape, ontology, ontology_hash, labels_version, train_job_id, compile_job_id, created_at)
         VALUES (@id, @version, @file_name, @path, @sha256, @bytes, @model_file, @backend, @input_shape, @ontology, @ontology_hash, @labels_version, @train_job_id, @compile_job_id, @created_at)`,
      )
      .run({ ...p, input_shape: JSON.stringify(p.input_shape) });
  }

  get(idOrVersion: string): PackageRecord | undefined {
    const row = this.db.prepare('SELECT * FROM packages WHERE id = ? OR version = ?').get(idOrVersion, idOrVersion) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  list(): PackageRecord[] {
    return (this.db.prepare('SELECT * FROM packages ORDER BY created_at DESC, rowid DESC').all() as Row[]).map(fromRow);
  }

  /** The next automatic version: v<n+1> after the packages so far. */
  nextVersion(): string {
    const n = (this.db.prepare('SELECT COUNT(*) AS n FROM packages').get() as { n: number }).n;
    for (let i = n + 1; ; i++) if (!this.get(`v${i}`)) return `v${i}`;
  }
}
