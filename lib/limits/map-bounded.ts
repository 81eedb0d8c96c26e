/**
 * `work` over `items` with at most `concurrency` in flight, results in the items' order (a fleet's
 * devices: each may run ffmpeg, an SSH session or tool calls, so a large fleet must not start them
 * all at once). A rejection of `work` rejects the whole, as Promise.all does.
 */
export async function mapBounded<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), items.length) }, worker));
  return out;
}
