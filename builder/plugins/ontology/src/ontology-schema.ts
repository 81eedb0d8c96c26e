import type { Migration } from 'lookout/builder-plugins/store';

export const ONTOLOGY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'ontologies, their classes and compiled labels',
    up: `
      CREATE TABLE ontologies (
        name TEXT PRIMARY KEY,
        class_map TEXT NOT NULL CHECK (class_map IN ('production', 'omni15', 'custom')),
        person_id_expected INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE ontology_classes (
        ontology TEXT NOT NULL REFERENCES ontologies(name) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY (ontology, id),
        UNIQUE (ontology, name)
      );
      CREATE TABLE ontology_labels (
        ontology TEXT NOT NULL REFERENCES ontologies(name) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        hash TEXT NOT NULL,
        labels TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (ontology, version)
      );
    `,
  },
];
