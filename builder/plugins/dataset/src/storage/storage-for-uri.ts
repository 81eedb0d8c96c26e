import { LookoutError } from 'lookout/core';
import type { DatasetStorage } from './dataset-storage.js';
import { LocalStorage } from './local-storage.js';
import { CloudStorage } from './cloud-storage.js';

export interface StorageSet {
  local: LocalStorage;
  gs: CloudStorage;
  s3: CloudStorage;
}

export function storageSet(roots: readonly string[]): StorageSet {
  return { local: new LocalStorage(roots), gs: new CloudStorage('gs'), s3: new CloudStorage('s3') };
}

/** The storage that reads a URI: a path or file:// here, gs:// and s3:// in the cloud. */
export function storageFor(set: StorageSet, uri: string): DatasetStorage {
  if (uri.startsWith('/') || uri.startsWith('file:')) return set.local;
  if (uri.startsWith('gs://')) return set.gs;
  if (uri.startsWith('s3://')) return set.s3;
  throw new LookoutError('dataset.uri_unsupported', `${uri}: a dataset URI is an absolute path, file://, gs:// or s3://`, { details: { uri } });
}
