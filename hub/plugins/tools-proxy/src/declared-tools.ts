/** More distinct names than any fleet declares; past it, names are not added (devices choose them). */
const MAX_DECLARED = 256;

/**
 * The tool names devices declare in tools/list, gathered as the hub's pool reads them: the values a
 * `tool` metric label may take, so that names a client makes up cannot grow the series. Bounded,
 * since a device (or whoever holds its token) chooses what it declares.
 */
export class DeclaredTools {
  private readonly names = new Set<string>();

  /** Adds names; answers true when one was new. */
  add(names: Iterable<string>): boolean {
    let added = false;
    for (const name of names) {
      if (this.names.size >= MAX_DECLARED) break;
      if (!this.names.has(name)) {
        this.names.add(name);
        added = true;
      }
    }
    return added;
  }

  has(name: string): boolean {
    return this.names.has(name);
  }

  list(): string[] {
    return [...this.names];
  }
}
