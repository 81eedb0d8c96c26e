/** One file of a dataset tree, by its path relative to the tree's root (forward slashes). */
export interface TreeEntry {
  path: string;
  size: number;
}

/**
 * Where a dataset tree lives, by URI scheme. The importers read only through it, so a tree on local
 * disk and one in a bucket import alike once a storage can reach it.
 */
export interface DatasetStorage {
  /** Every file of the tree under `uri`, streamed (a large tree is never listed into memory at once by the storage). */
  list(uri: string): AsyncIterable<TreeEntry>;
  /** A file of the tree, at most `maxBytes` (a larger one is refused: `dataset.file_too_large`). */
  read(uri: string, path: string, maxBytes: number): Promise<Buffer>;
  /** Whether the tree has the file. */
  exists(uri: string, path: string): Promise<boolean>;
  /** Whether `uri` names a file (a COCO JSON) rather than a tree. */
  isFile(uri: string): Promise<boolean>;
}
