import { serviceToken } from 'lookout/core';
import type { DescriberEndpoint } from './describer-endpoint.js';

export type { DescriberEndpoint } from './describer-endpoint.js';

/**
 * Track L (host only): records of language-model artifacts through spec 02's stages. They never go
 * to a camera nor through the vendor compile: the compile, package and deploy stages ask `isTrackL`
 * and refuse such an id with a clear error.
 */
export const TRACK_L_STAGES = ['curriculum', 'dataset_factory', 'train', 'package', 'deploy', 'evaluate', 'promote'] as const;
export type TrackLStage = (typeof TRACK_L_STAGES)[number];

export interface TrackLArtifact {
  id: string;
  name: string;
  base_model: string;
  /** B (default): no adapter training, a stock large model with skills and memory; A: adapter training, only after a release audit. */
  train_path: 'A' | 'B';
  /** The last stage recorded, or null before curriculum. */
  stage: TrackLStage | null;
  stages: { stage: TrackLStage; at: string; notes: string | null }[];
  release_audit: { auditor: string; summary: string; at: string } | null;
  /** Host environment variables of its deploy (the describers' OpenAI-compatible endpoint). */
  host_env: Record<string, string> | null;
  promoted_at: string | null;
  created_at: string;
}

export interface TrackLService {
  get(id: string): TrackLArtifact | undefined;
  isTrackL(id: string): boolean;
  /** The promoted model's OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_MODEL of its host env), null when none is promoted or it names none. */
  promotedDescriber(): DescriberEndpoint | null;
}

export const TRACK_L = serviceToken<TrackLService>('builder.track-l');
