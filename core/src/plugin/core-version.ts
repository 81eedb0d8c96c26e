import { LookoutError } from '../errors/lookout-error.js';

/** The version of the plugin contract this core implements. */
export const CORE_VERSION = '1.0.0';

/** Checks a plugin's `core` range: `*`, `^X`, `^X.Y`, `^X.Y.Z`, `X.x`, `>=X.Y.Z` or an exact version. */
export function coreSatisfies(range: string, version = CORE_VERSION): boolean {
  const [maj, min, pat] = version.split('.').map(Number) as [number, number, number];
  const r = range.trim();
  if (r === '*' || r === '') return true;
  const parts = (s: string) => s.split('.').map((p) => (p === 'x' || p === '*' ? NaN : Number(p)));
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < 3; i++) {
      const x = a[i] ?? 0;
      const y = Number.isNaN(b[i]) ? x : (b[i] ?? 0);
      if (x !== y) return x - y;
    }
    return 0;
  };
  const v = [maj, min, pat];
  if (r.startsWith('^')) {
    const p = parts(r.slice(1));
    return p[0] === maj && cmp(v, p) >= 0;
  }
  if (r.startsWith('>=')) return cmp(v, parts(r.slice(2))) >= 0;
  const p = parts(r);
  return p.every((n, i) => Number.isNaN(n) || n === v[i]);
}

export function assertCoreCompatible(plugin: string, range: string): void {
  if (!coreSatisfies(range)) {
    throw new LookoutError('plugin_core_incompatible', `plugin "${plugin}" needs core ${range}; this core is ${CORE_VERSION}`, {
      details: { plugin, range, core: CORE_VERSION },
    });
  }
}
