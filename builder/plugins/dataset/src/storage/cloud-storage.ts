import { LookoutError } from 'lookout/core';
import type { DatasetStorage, TreeEntry } from './dataset-storage.js';

interface CloudProvider {
  scheme: 'gs' | 's3';
  service: string;
  /** Bucket naming rules of the provider (lower case, 3-63, dots and dashes inside). */
  bucket: RegExp;
}

const PROVIDERS: Record<'gs' | 's3', CloudProvider> = {
  gs: { scheme: 'gs', service: 'Google Cloud Storage', bucket: /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/ },
  s3: { scheme: 's3', service: 'Amazon S3', bucket: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/ },
};

/**
 * Dataset trees in a cloud bucket (`gs://bucket/prefix`, `s3://bucket/prefix`). This builder has no
 * route to the cloud (only loopback and the npm registry are reachable here), so after checking the
 * URI every operation answers `dataset.storage_unreachable`, naming the bucket and what to do instead.
 */
export class CloudStorage implements DatasetStorage {
  private readonly provider: CloudProvider;

  constructor(scheme: 'gs' | 's3') {
    this.provider = PROVIDERS[scheme];
  }

  /** `{ bucket, prefix }` of a URI of this scheme, or a typed 400 naming what is wrong. */
  parse(uri: string): { bucket: string; prefix: string } {
    const m = new RegExp(`^${this.provider.scheme}://([^/]+)(?:/(.*))?$`).exec(uri);
    if (!m || !this.provider.bucket.test(m[1])) {
      throw new LookoutError('dataset.uri_unsupported', `${uri}: not a ${this.provider.scheme}://<bucket>/<prefix> URI with a valid bucket name`, {
        details: { uri },
      });
    }
    return { bucket: m[1], prefix: m[2] ?? '' };
  }

  // eslint-disable-next-line require-yield
  async *list(uri: string): AsyncIterable<TreeEntry> {
    throw this.unreachable(uri);
  }

  async read(uri: string): Promise<Buffer> {
    throw this.unreachable(uri);
  }

  async exists(uri: string): Promise<boolean> {
    throw this.unreachable(uri);
  }

  async isFile(uri: string): Promise<boolean> {
    throw this.unreachable(uri);
  }

  private unreachable(uri: string): LookoutError {
    const { bucket, prefix } = this.parse(uri);
    return new LookoutError(
      'dataset.storage_unreachable',
      `${this.provider.service} (${this.provider.scheme}://${bucket}) is not reachable from this builder; copy the tree into a dataset root and import its local path`,
      { details: { uri, scheme: this.provider.scheme, bucket, prefix } },
    );
  }
}
