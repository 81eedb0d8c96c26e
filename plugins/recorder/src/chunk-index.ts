import type { ChunkSidecar } from 'lookout/core/contracts';
import { listChunkFiles } from './chunk-files.js';
import { readSidecar } from './sidecar.js';

/**
 * The complete chunks in memory, by name (names sort by time): what the tools, the manifest and
 * data_manifest answer from without reading every sidecar again. `refresh` follows changes made
 * from outside (`lookout prune-recordings`, an operator deleting files).
 */
export class ChunkIndex {
  private readonly byName = new Map<string, ChunkSidecar>();
  private sorted: ChunkSidecar[] | undefined;

  constructor(private readonly dir: string) {}

  async refresh(): Promise<void> {
    const names = await listChunkFiles(this.dir);
    const present = new Set(names);
    for (const name of this.byName.keys()) if (!present.has(name)) this.byName.delete(name);
    for (const name of names) {
      if (this.byName.has(name)) continue;
      const sidecar = await readSidecar(this.dir, name);
      if (sidecar) this.byName.set(name, sidecar);
    }
    this.sorted = undefined;
  }

  add(sidecar: ChunkSidecar): void {
    this.byName.set(sidecar.name, sidecar);
    this.sorted = undefined;
  }

  get(name: string): ChunkSidecar | undefined {
    return this.byName.get(name);
  }

  get size(): number {
    return this.byName.size;
  }

  /** Oldest first. */
  all(): readonly ChunkSidecar[] {
    this.sorted ??= [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return this.sorted;
  }

  newest(): ChunkSidecar | undefined {
    const all = this.all();
    return all[all.length - 1];
  }

  /** The next sequence number: one past the highest on disk, so names stay unique across restarts. */
  nextSeq(): number {
    let max = -1;
    for (const name of this.byName.keys()) {
      const m = /_(\d{6})\.h265$/.exec(name);
      if (m) max = Math.max(max, Number(m[1]));
    }
    return (max + 1) % 1_000_000;
  }
}
