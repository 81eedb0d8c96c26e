import { serviceToken } from 'lookout/core';
import type { RecordingStatusResult } from 'lookout/core/contracts';
/**
 * The recorder's published surface: its prune rules and chunk-file naming, which the operator's manual
 * prune (`lookout prune-recordings`, local or over SSH) applies the same way the recorder does.
 */
export { files, MANIFEST_FILE } from './chunk-files.js';
export { dropGoneFromManifest } from './manifest-file.js';
export { chunkFilesInRemovalOrder, pruneInventory, pruneRecordings, type PruneEntry, type PruneReport } from './prune.js';

/** The recorder's get_recording_status answer, for other device plugins (conversational_safety_query). */
export interface RecordingStatusSource {
  status(): Promise<RecordingStatusResult>;
}

export const RecordingStatusToken = serviceToken<RecordingStatusSource>('recording-status');
