import type BetterSqlite3 from 'better-sqlite3';
import { LookoutError } from 'lookout/core';
import type { CompiledLabels, OntologyClassMap, OntologyConfig, OntologyService } from './service.js';
import { compileLabels, ontologyHash } from './compile-labels.js';

/** A class list per named ontology (index = id) and its compiled labels, versioned. */
export class OntologyStore implements OntologyService {
  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly maxClasses: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  names(): { name: string; class_map: OntologyClassMap; classes: number }[] {
    return this.db
      .prepare('SELECT o.name, o.class_map, (SELECT COUNT(*) FROM ontology_classes c WHERE c.ontology = o.name) AS classes FROM ontologies o ORDER BY o.name')
      .all() as { name: string; class_map: OntologyClassMap; classes: number }[];
  }

  config(name: string): OntologyConfig | undefined {
    const row = this.db.prepare('SELECT class_map FROM ontologies WHERE name = ?').get(name) as { class_map: OntologyClassMap } | undefined;
    if (!row) return undefined;
    const classes = (this.db.prepare('SELECT name FROM ontology_classes WHERE ontology = ? ORDER BY id').all(name) as { name: string }[]).map((r) => r.name);
    return { name, class_map: row.class_map, classes };
  }

  personIdExpected(name: string): number | undefined {
    const row = this.db.prepare('SELECT person_id_expected AS p FROM ontologies WHERE name = ?').get(name) as { p: number | null } | undefined;
    return row?.p ?? undefined;
  }

  /** Replaces (or creates) an ontology's class list; `personId` is where an imported map puts person. */
  put(config: OntologyConfig, personId?: number): void {
    this.checkSize(config.name, config.classes.length);
    const at = this.now().toISOString();
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO ontologies (name, class_map, person_id_expected, created_at, updated_at) VALUES (@name, @class_map, @person, @at, @at)
           ON CONFLICT(name) DO UPDATE SET class_map = @class_map, person_id_expected = COALESCE(@person, person_id_expected), updated_at = @at`,
        )
        .run({ name: config.name, class_map: config.class_map, person: personId ?? null, at });
      this.db.prepare('DELETE FROM ontology_classes WHERE ontology = ?').run(config.name);
      const insert = this.db.prepare('INSERT INTO ontology_classes (ontology, id, name) VALUES (?, ?, ?)');
      config.classes.forEach((c, i) => insert.run(config.name, i, c));
    })();
  }

  /** Appends classes (ids after the last); a name already there is refused, naming it. */
  add(name: string, classes: readonly string[]): OntologyConfig {
    const current = this.require(name);
    const clash = classes.filter((c, i) => current.classes.includes(c) || classes.indexOf(c) !== i);
    if (clash.length > 0) {
      throw new LookoutError('ontology.class_exists', `ontology "${name}" already has the class "${clash[0]}"`, {
        details: { ontology: name, classes: clash },
      });
    }
    // Any edit leaves the named maps: their ids are fixed by the spec.
    this.put({ name, class_map: 'custom', classes: [...current.classes, ...classes] });
    return this.config(name)!;
  }

  /** Removes a class; the classes after it move up one id (the person guard catches person moving). */
  remove(name: string, className: string): OntologyConfig {
    const current = this.require(name);
    if (!current.classes.includes(className)) {
      throw new LookoutError('ontology.class_unknown', `ontology "${name}" has no class "${className}"`, { details: { ontology: name, class: className } });
    }
    this.put({ name, class_map: 'custom', classes: current.classes.filter((c) => c !== className) });
    return this.config(name)!;
  }

  delete(name: string): void {
    this.require(name);
    this.db.prepare('DELETE FROM ontologies WHERE name = ?').run(name);
  }

  /**
   * Compiles the class list into labels.json. The same classes as the newest version give that version
   * back (nothing new to deploy); other classes a new version. The person guard is PersonGuard's.
   */
  compile(name: string, acknowledged?: number | null): { labels: CompiledLabels; created: boolean } {
    const config = this.require(name);
    if (config.classes.length === 0)
      throw new LookoutError('ontology.ontology_empty', `ontology "${name}" has no classes to compile`, { details: { ontology: name } });
    const latest = this.latestRow(name);
    const hash = ontologyHash(config.classes);
    if (latest && latest.hash === hash) return { labels: JSON.parse(latest.labels) as CompiledLabels, created: false };
    const version = (latest?.version ?? 0) + 1;
    const guard = { expected: this.personIdExpected(name), ...(acknowledged !== undefined ? { acknowledged } : {}) };
    const labels = compileLabels(config, guard, `v${version}`, this.now());
    const personAt = config.classes.indexOf('person');
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO ontology_labels (ontology, version, hash, labels, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(name, version, hash, JSON.stringify(labels), labels.compiled_at);
      // What the fleet's remap expects from now on is where this version put person.
      this.db.prepare('UPDATE ontologies SET person_id_expected = ? WHERE name = ?').run(personAt >= 0 ? personAt : null, name);
    })();
    return { labels, created: true };
  }

  labels(name: string, version?: string): CompiledLabels | undefined {
    const row =
      version === undefined
        ? this.latestRow(name)
        : (this.db.prepare('SELECT labels FROM ontology_labels WHERE ontology = ? AND version = ?').get(name, Number(version.replace(/^v/, ''))) as
            { labels: string } | undefined);
    return row ? (JSON.parse(row.labels) as CompiledLabels) : undefined;
  }

  versions(name: string): { version: string; hash: string; created_at: string }[] {
    return (
      this.db.prepare('SELECT version, hash, created_at FROM ontology_labels WHERE ontology = ? ORDER BY version').all(name) as {
        version: number;
        hash: string;
        created_at: string;
      }[]
    ).map((r) => ({ ...r, version: `v${r.version}` }));
  }

  require(name: string): OntologyConfig {
    const config = this.config(name);
    if (!config) throw new LookoutError('ontology.ontology_unknown', `no ontology "${name}"`, { details: { ontology: name } });
    return config;
  }

  private latestRow(name: string): { version: number; hash: string; labels: string } | undefined {
    return this.db.prepare('SELECT version, hash, labels FROM ontology_labels WHERE ontology = ? ORDER BY version DESC LIMIT 1').get(name) as
      { version: number; hash: string; labels: string } | undefined;
  }

  private checkSize(name: string, count: number): void {
    if (count > this.maxClasses) {
      throw new LookoutError('bad_request', `ontology "${name}" would have ${count} classes; at most ${this.maxClasses}`, {
        details: { field: 'body.classes', limit: this.maxClasses },
      });
    }
  }
}
