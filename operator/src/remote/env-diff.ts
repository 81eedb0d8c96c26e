/** How a layer env changes: keys added, removed and changed. Values are shown: layer files hold no secrets. */
export interface EnvDiff {
  added: Record<string, string>;
  removed: Record<string, string>;
  changed: Record<string, { from: string; to: string }>;
}

export function envDiff(before: Record<string, string>, after: Record<string, string>): EnvDiff {
  const diff: EnvDiff = { added: {}, removed: {}, changed: {} };
  for (const [k, v] of Object.entries(after)) {
    if (!(k in before)) diff.added[k] = v;
    else if (before[k] !== v) diff.changed[k] = { from: before[k], to: v };
  }
  for (const [k, v] of Object.entries(before)) if (!(k in after)) diff.removed[k] = v;
  return diff;
}

export function formatEnvDiff(diff: EnvDiff): string {
  const lines = [
    ...Object.entries(diff.removed).map(([k, v]) => `- ${k}=${v}`),
    ...Object.entries(diff.changed).map(([k, c]) => `- ${k}=${c.from}\n+ ${k}=${c.to}`),
    ...Object.entries(diff.added).map(([k, v]) => `+ ${k}=${v}`),
  ];
  return lines.length > 0 ? lines.join('\n') : '(no change)';
}
