import { randomUUID } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { LookoutError } from 'lookout/core';
import type { Migration } from 'lookout/builder-plugins/store';
import { TRACK_L_STAGES, type TrackLArtifact, type TrackLStage } from './service.js';

export const TRACK_L_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'track L artifacts',
    up: `CREATE TABLE track_l_artifacts (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      base_model TEXT NOT NULL,
      train_path TEXT NOT NULL CHECK (train_path IN ('A', 'B')),
      stage TEXT,
      stages TEXT NOT NULL DEFAULT '[]',
      release_audit TEXT,
      host_env TEXT,
      promoted_at TEXT,
      created_at TEXT NOT NULL
    )`,
  },
];

interface Row {
  id: string;
  name: string;
  base_model: string;
  train_path: 'A' | 'B';
  stage: TrackLStage | null;
  stages: string;
  release_audit: string | null;
  host_env: string | null;
  promoted_at: string | null;
  created_at: string;
}

const fromRow = (r: Row): TrackLArtifact => ({
  ...r,
  stages: JSON.parse(r.stages) as TrackLArtifact['stages'],
  release_audit: r.release_audit ? (JSON.parse(r.release_audit) as TrackLArtifact['release_audit']) : null,
  host_env: r.host_env ? (JSON.parse(r.host_env) as Record<string, string>) : null,
});

/** Track L records: stages in the spec's order, path A behind a recorded release audit, deploy as host env only. */
export class TrackLStore {
  constructor(private readonly db: BetterSqlite3.Database) {}

  create(a: { name: string; base_model: string; train_path: 'A' | 'B' }): TrackLArtifact {
    if (this.db.prepare('SELECT 1 FROM track_l_artifacts WHERE name = ?').get(a.name)) {
      throw new LookoutError('track-l.artifact_exists', `a Track L artifact "${a.name}" exists`, { details: { name: a.name } });
    }
    const id = `trackl-${randomUUID()}`;
    this.db
      .prepare('INSERT INTO track_l_artifacts (id, name, base_model, train_path, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(id, a.name, a.base_model, a.train_path, new Date().toISOString());
    return this.get(id)!;
  }

  get(id: string): TrackLArtifact | undefined {
    const row = this.db.prepare('SELECT * FROM track_l_artifacts WHERE id = ? OR name = ?').get(id, id) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  require(id: string): TrackLArtifact {
    const a = this.get(id);
    if (!a) throw new LookoutError('track-l.artifact_unknown', `no Track L artifact ${id}`, { details: { id } });
    return a;
  }

  list(): TrackLArtifact[] {
    return (this.db.prepare('SELECT * FROM track_l_artifacts ORDER BY created_at').all() as Row[]).map(fromRow);
  }

  audit(id: string, audit: { auditor: string; summary: string }): TrackLArtifact {
    const a = this.require(id);
    this.db.prepare('UPDATE track_l_artifacts SET release_audit = ? WHERE id = ?').run(JSON.stringify({ ...audit, at: new Date().toISOString() }), a.id);
    return this.get(a.id)!;
  }

  /** Records the next stage; another order, path A's train without an audit, a deploy without host env are refused. */
  record(id: string, stage: TrackLStage, o: { notes?: string; host_env?: Record<string, string> }): TrackLArtifact {
    const a = this.require(id);
    const next = TRACK_L_STAGES[a.stage === null ? 0 : TRACK_L_STAGES.indexOf(a.stage) + 1];
    if (stage !== next) {
      throw new LookoutError(
        'track-l.stage_out_of_order',
        `artifact ${a.name} is at ${a.stage ?? 'no stage'}; the next stage is ${next ?? 'none (promoted)'}, not ${stage}`,
        {
          details: { id: a.id, stage: a.stage, next: next ?? null },
        },
      );
    }
    if (stage === 'train' && a.train_path === 'A' && !a.release_audit) {
      throw new LookoutError('track-l.release_audit_missing', `artifact ${a.name} takes path A (adapter training): record its release audit first`, {
        details: { id: a.id },
      });
    }
    if (stage === 'deploy' && (!o.host_env || Object.keys(o.host_env).length === 0)) {
      throw new LookoutError('track-l.host_env_missing', 'a Track L deploy is host environment variables (host_env): never a device', {
        details: { id: a.id },
      });
    }
    const at = new Date().toISOString();
    this.db.transaction(() => {
      if (stage === 'promote') this.db.prepare('UPDATE track_l_artifacts SET promoted_at = NULL').run();
      this.db
        .prepare(
          `UPDATE track_l_artifacts SET stage = ?, stages = ?, host_env = COALESCE(?, host_env), promoted_at = CASE WHEN ? THEN ? ELSE promoted_at END WHERE id = ?`,
        )
        .run(
          stage,
          JSON.stringify([...a.stages, { stage, at, notes: o.notes ?? null }]),
          o.host_env ? JSON.stringify(o.host_env) : null,
          stage === 'promote' ? 1 : 0,
          at,
          a.id,
        );
    })();
    return this.get(a.id)!;
  }

  promoted(): TrackLArtifact | undefined {
    const row = this.db.prepare('SELECT * FROM track_l_artifacts WHERE promoted_at IS NOT NULL').get() as Row | undefined;
    return row ? fromRow(row) : undefined;
  }
}
