import type BetterSqlite3 from 'better-sqlite3';
import type { Migration } from 'lookout/builder-plugins/store';
import type { DeploymentRecord, DeploymentService } from './service.js';

export const DEPLOY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'deployments',
    up: `CREATE TABLE deployments (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      job_id TEXT NOT NULL,
      device TEXT NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('canary', 'fleet')),
      package_id TEXT NOT NULL,
      package_version TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('active', 'replaced', 'rolled_back')),
      since TEXT NOT NULL,
      until TEXT
    );
    CREATE INDEX deployments_by_device ON deployments(device, id);`,
  },
];

/** Deployments, never deleted: one active row per device at most. */
export class DeployStore implements DeploymentService {
  constructor(private readonly db: BetterSqlite3.Database) {}

  active(device: string): DeploymentRecord | undefined {
    return this.db.prepare(`SELECT * FROM deployments WHERE device = ? AND state = 'active'`).get(device) as DeploymentRecord | undefined;
  }

  list(filter: { device?: string; package_id?: string } = {}): DeploymentRecord[] {
    return this.db
      .prepare('SELECT * FROM deployments WHERE (@device IS NULL OR device = @device) AND (@pkg IS NULL OR package_id = @pkg) ORDER BY id DESC')
      .all({ device: filter.device ?? null, pkg: filter.package_id ?? null }) as DeploymentRecord[];
  }

  /** The package now runs on the device: the row before it is replaced. */
  activate(d: Omit<DeploymentRecord, 'id' | 'state' | 'since' | 'until'>): DeploymentRecord {
    const at = new Date().toISOString();
    return this.db.transaction(() => {
      this.db.prepare(`UPDATE deployments SET state = 'replaced', until = ? WHERE device = ? AND state = 'active'`).run(at, d.device);
      const id = this.db
        .prepare(`INSERT INTO deployments (job_id, device, role, package_id, package_version, state, since) VALUES (?, ?, ?, ?, ?, 'active', ?)`)
        .run(d.job_id, d.device, d.role, d.package_id, d.package_version, at).lastInsertRowid;
      return this.db.prepare('SELECT * FROM deployments WHERE id = ?').get(id) as DeploymentRecord;
    })();
  }

  /** A rollback: the job's row is undone and the one before it (if any) runs again. */
  rollBack(jobId: string, device: string, previous: DeploymentRecord | undefined): void {
    const at = new Date().toISOString();
    this.db.transaction(() => {
      this.db.prepare(`UPDATE deployments SET state = 'rolled_back', until = ? WHERE job_id = ? AND device = ? AND state = 'active'`).run(at, jobId, device);
      if (previous) this.db.prepare(`UPDATE deployments SET state = 'active', until = NULL WHERE id = ?`).run(previous.id);
    })();
  }
}
