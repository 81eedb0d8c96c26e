import { open, opendir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LookoutError } from 'lookout/core';
import type { DatasetStorage, TreeEntry } from './dataset-storage.js';

/**
 * Dataset trees on this machine's disk (a path or file:// URI). Only trees inside the configured
 * dataset roots are read, and no path inside a tree (`..`, a symbolic link) escapes its root: a
 * client of the API names what to import, never what the builder may read.
 */
export class LocalStorage implements DatasetStorage {
  /** Trees already resolved and checked against the roots: an import reads thousands of files of one. */
  private readonly trees = new Map<string, Promise<string>>();

  constructor(private readonly roots: readonly string[]) {}

  async *list(uri: string): AsyncIterable<TreeEntry> {
    const root = await this.resolveTree(uri);
    const walk = async function* (dir: string): AsyncIterable<TreeEntry> {
      const entries = [];
      for await (const e of await opendir(dir)) entries.push(e);
      // Sorted, so that an import (and its split) is the same on every run over the same tree.
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        const path = join(dir, e.name);
        if (e.isDirectory()) yield* walk(path);
        else if (e.isFile()) yield { path: relative(root, path).split(sep).join('/'), size: (await stat(path)).size };
      }
    };
    yield* walk(root);
  }

  async read(uri: string, path: string, maxBytes: number): Promise<Buffer> {
    const file = await this.resolveFile(uri, path);
    // One handle for the size check and the read: what is read is what was measured.
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      if (size > maxBytes)
        throw new LookoutError('dataset.file_too_large', `${path} is ${size} bytes; at most ${maxBytes}`, { details: { path, size, limit: maxBytes } });
      const bytes = Buffer.alloc(size);
      let at = 0;
      while (at < size) {
        const { bytesRead } = await handle.read(bytes, at, size - at, at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
      return at === size ? bytes : bytes.subarray(0, at);
    } finally {
      await handle.close();
    }
  }

  async exists(uri: string, path: string): Promise<boolean> {
    try {
      await this.resolveFile(uri, path);
      return true;
    } catch (err) {
      if (err instanceof LookoutError && err.code === 'dataset.path_not_found') return false;
      throw err;
    }
  }

  async isFile(uri: string): Promise<boolean> {
    return (await stat(await this.resolveInRoots(uri))).isFile();
  }

  /** The tree's real path: inside a root, and a directory (or the folder of a file URI). */
  private resolveTree(uri: string): Promise<string> {
    let tree = this.trees.get(uri);
    if (!tree) {
      tree = this.resolveInRoots(uri).then(async (real) => ((await stat(real)).isDirectory() ? real : resolve(real, '..')));
      // Failures are not kept: the tree may appear later. The map stays small (the last trees read).
      tree.catch(() => this.trees.delete(uri));
      if (this.trees.size >= 64) this.trees.delete(this.trees.keys().next().value!);
      this.trees.set(uri, tree);
    }
    return tree;
  }

  private async resolveFile(uri: string, path: string): Promise<string> {
    const root = await this.resolveTree(uri);
    if (isAbsolute(path) || path.split(/[\\/]/).includes('..')) {
      throw new LookoutError('dataset.path_outside_root', `${path}: a path inside the dataset must be relative and stay inside it`, { details: { path } });
    }
    const real = await realpath(join(root, path)).catch(() => {
      throw new LookoutError('dataset.path_not_found', `${path} is not in the dataset`, { details: { path } });
    });
    if (!within(root, real)) throw new LookoutError('dataset.path_outside_root', `${path} leads outside the dataset (a link?)`, { details: { path } });
    return real;
  }

  private async resolveInRoots(uri: string): Promise<string> {
    const path = uri.startsWith('file:') ? fileURLToPath(uri) : uri;
    if (!isAbsolute(path))
      throw new LookoutError('dataset.uri_unsupported', `${uri}: a local dataset is named by an absolute path or a file:// URI`, { details: { uri } });
    const real = await realpath(path).catch(() => {
      throw new LookoutError('dataset.path_not_found', `${uri} does not exist on the builder`, { details: { uri } });
    });
    const roots = await Promise.all(this.roots.map((r) => realpath(r).catch(() => resolve(r))));
    if (!roots.some((r) => within(r, real))) {
      throw new LookoutError('dataset.path_outside_root', `${uri} is outside the builder's dataset roots (${this.roots.join(', ')})`, {
        details: { uri, roots: this.roots },
      });
    }
    return real;
  }
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
