/**
 * `work` over `items` with up to `ahead` running at once, results yielded in the items' order: an
 * import reads the next frames' files while it checks and writes the current one (one file at a
 * time spends most of its time waiting on the disk).
 */
export async function* orderedPrefetch<T, R>(items: Iterable<T>, ahead: number, work: (item: T) => Promise<R>): AsyncIterable<R> {
  const it = items[Symbol.iterator]();
  const queue: Promise<R>[] = [];
  const fill = () => {
    while (queue.length < ahead) {
      const next = it.next();
      if (next.done) return;
      const p = work(next.value);
      // Handled when its turn comes; this keeps an early failure from being reported as unhandled.
      p.catch(() => undefined);
      queue.push(p);
    }
  };
  fill();
  while (queue.length > 0) {
    const r = await queue.shift()!;
    fill();
    yield r;
  }
}
