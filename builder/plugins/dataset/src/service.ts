import { serviceToken } from 'lookout/core';

export type DatasetState = 'IMPORTING' | 'READY' | 'FAILED';
export type DatasetSplit = 'train' | 'val' | 'test';

/** What an import found wrong or changed: nothing is dropped without being counted here. */
export interface ValidationReport {
  frames_seen: number;
  frames_imported: number;
  boxes_imported: number;
  /** Class names (or `#<index>` without a name) that the ontology does not have, with their box counts: those boxes are left out. */
  unknown_classes: Record<string, number>;
  /** Boxes reaching outside the image, clamped to normalised 0..1. */
  boxes_clamped: number;
  /** Boxes with nothing left inside the image after clamping (left out). */
  boxes_degenerate: number;
  label_lines_malformed: number;
  /** Frames with no box (kept: background frames). */
  frames_unlabelled: number;
  /** Zero-byte image files (left out). */
  empty_images: { count: number; examples: string[] };
  /** Truncated, garbled or oversized image files (left out), with why. */
  corrupt_images: { count: number; examples: { image: string; why: string }[] };
  /** Frames whose bytes equal an earlier frame's (left out). */
  duplicate_frames: { count: number; examples: { image: string; duplicate_of: string }[] };
  /** With thermal pairs asked: frames whose thermal twin is missing (left out, so every frame kept is a pair). */
  thermal_unpaired: { count: number; examples: string[] };
  /** Label files with no image. */
  orphan_labels: { count: number; examples: string[] };
  /** Classes with fewer clips than splits in use: they cannot be in every split. */
  classes_in_too_few_clips: string[];
}

export interface SplitCounts {
  frames: number;
  clips: number;
  boxes: number;
  /** Boxes per class name. */
  classes: Record<string, number>;
}

export interface DatasetStatus {
  name: string;
  uri: string;
  format: 'yolo' | 'coco' | 'yolov8';
  ontology: string;
  /** The ontology's classes at import (id = index): the ids the boxes carry. */
  classes: string[];
  thermal: boolean;
  state: DatasetState;
  reason: string | null;
  progress: { phase: string | null; done: number; total: number };
  splits: Record<DatasetSplit, SplitCounts>;
  /** Per class: boxes, frames and clips over the whole dataset. */
  class_counts: Record<string, { boxes: number; frames: number; clips: number }>;
  report: ValidationReport | null;
  created_at: string;
  updated_at: string;
}

export interface DatasetService {
  status(name: string): DatasetStatus | undefined;
}

export const DATASETS = serviceToken<DatasetService>('builder.datasets');
