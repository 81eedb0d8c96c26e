/** `lookout/lib/storage`: Storage on a device: volume usage and health thresholds, recording file names, the recordings service token and folders named after a device. */
export * from './device-folder.js';
export * from './recording-files.js';
export * from './volume-usage.js';
