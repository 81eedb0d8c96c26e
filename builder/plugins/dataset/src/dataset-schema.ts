import type { Migration } from 'lookout/builder-plugins/store';

export const DATASET_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'datasets, frames and boxes',
    up: `
      CREATE TABLE datasets (
        name TEXT PRIMARY KEY,
        uri TEXT NOT NULL,
        format TEXT NOT NULL CHECK (format IN ('yolo', 'coco', 'yolov8')),
        ontology TEXT NOT NULL,
        options TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('IMPORTING', 'READY', 'FAILED')),
        reason TEXT,
        phase TEXT,
        done INTEGER NOT NULL DEFAULT 0,
        total INTEGER NOT NULL DEFAULT 0,
        report TEXT,
        split TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE dataset_frames (
        dataset TEXT NOT NULL REFERENCES datasets(name) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        image TEXT NOT NULL,
        thermal TEXT,
        clip TEXT NOT NULL,
        split TEXT CHECK (split IN ('train', 'val', 'test')),
        source_split TEXT,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        PRIMARY KEY (dataset, id)
      );
      CREATE INDEX frames_by_clip ON dataset_frames(dataset, clip);
      CREATE TABLE dataset_boxes (
        dataset TEXT NOT NULL,
        frame INTEGER NOT NULL,
        class_id INTEGER NOT NULL,
        cx REAL NOT NULL,
        cy REAL NOT NULL,
        w REAL NOT NULL,
        h REAL NOT NULL,
        FOREIGN KEY (dataset, frame) REFERENCES dataset_frames(dataset, id) ON DELETE CASCADE
      );
      CREATE INDEX boxes_by_frame ON dataset_boxes(dataset, frame);
    `,
  },
];
