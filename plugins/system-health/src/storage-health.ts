/** The thresholds and the rule are core's (the recorder reports storage_health the same way). */
export { storageHealth, type StorageThresholds } from 'lookout/lib/storage';
