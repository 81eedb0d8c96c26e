/** `lookout/lib/storage`: Storage on a device: volume usage and health thresholds, recording file names and the recordings service token. */
export * from './recording-files.js';
export * from './volume-usage.js';
