/**
 * Keys in a layer env that no loaded plugin declares. They are warnings, not errors: other
 * components of a device read the same file. Each comes with the nearest declared key as a hint.
 */
export function unknownEnvKeys(env: Record<string, string>, declared: Set<string>, ignore: Iterable<string> = []): { key: string; hint?: string }[] {
  const skip = new Set(ignore);
  const known = [...declared];
  return Object.keys(env)
    .filter((k) => !declared.has(k) && !skip.has(k))
    .map((key) => {
      const hint = nearest(key, known);
      return hint ? { key, hint } : { key };
    });
}

function nearest(key: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(key.toUpperCase(), c.toUpperCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  // Only a plausible typo is worth a hint.
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(key.length / 4)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}
