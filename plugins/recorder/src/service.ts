import { serviceToken } from 'lookout/core';
import type { RecordingStatusResult } from 'lookout/core/contracts';
/**
 * The recorder's published surface: its prune rules, and the manual prune itself (pruneStore: one
 * builder of its report) that `lookout prune-recordings` runs on a local folder or, through a
 * ChunkStore over SFTP, on a device.
 */
export { pruneInventory, pruneRecordings, type PruneEntry, type PruneReport } from './prune.js';
export { localChunkStore, pruneStore, type ChunkStore, type ManualPruneReport } from './store-prune.js';

/** The recorder's get_recording_status answer, for other device plugins (conversational_safety_query). */
export interface RecordingStatusSource {
  status(): Promise<RecordingStatusResult>;
}

export const RecordingStatusToken = serviceToken<RecordingStatusSource>('recording-status');
