export function ago(iso: string | null | number, now = Date.now()): string {
  if (iso === null) return '—';
  const t = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(t)) return '—';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export function clock(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '—' : d.toLocaleTimeString();
}

export const num = (v: number | null | undefined, digits = 1, unit = ''): string =>
  v === null || v === undefined || !Number.isFinite(v) ? '—' : `${v.toFixed(digits)}${unit}`;

export function gradeClass(grade: string | null | undefined): string {
  return grade === 'ready' ? 'ok' : grade === 'degraded' ? 'warn' : grade === 'not_ready' ? 'bad' : 'muted';
}

export function thermalClass(state: string | null): string {
  return state === 'NORMAL' ? 'ok' : state === 'THERMAL_WARN' ? 'warn' : state === 'THERMAL_CRITICAL' ? 'bad' : 'muted';
}

export function storageClass(state: string | null): string {
  return state === 'OK' ? 'ok' : state === 'WARNING' ? 'warn' : state === 'CRITICAL' ? 'bad' : 'muted';
}
