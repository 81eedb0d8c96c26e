/**
 * xs:duration and xs:dateTime as the Events service reads them (InitialTerminationTime, Timeout,
 * TerminationTime) and writes them (always UTC with `Z`: clients reject times without a zone).
 */

const NUM = '(\\d+(?:\\.\\d+)?)';
const DURATION = new RegExp(`^(-)?P(?:${NUM}Y)?(?:${NUM}M)?(?:${NUM}D)?(?:T(?:${NUM}H)?(?:${NUM}M)?(?:${NUM}S)?)?$`);
// Years and months have no fixed length; the approximations only matter for absurdly long lifetimes, which are clamped anyway.
const UNIT_MS = [365 * 86_400_000, 30 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1000];
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/** Milliseconds of an xs:duration (`PT60S`, `PT1M30S`, `PT0.5S`, `-PT5S`), or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (!m || text.endsWith('P') || text.endsWith('T')) return undefined;
  const parts = m.slice(2);
  if (parts.every((p) => p === undefined)) return undefined;
  const ms = parts.reduce((sum, p, i) => sum + (p === undefined ? 0 : Number(p) * UNIT_MS[i]), 0);
  return m[1] ? -ms : ms;
}

/**
 * An absolute time in ms from either form WS-BaseNotification allows for a termination time: a
 * duration from now, or an xs:dateTime (a time without a zone is taken as UTC). Undefined when neither.
 */
export function parseTerminationTime(text: string, nowMs: number): number | undefined {
  const t = text.trim();
  if (t.startsWith('P') || t.startsWith('-P')) {
    const d = parseDuration(t);
    return d === undefined ? undefined : nowMs + d;
  }
  const m = DATE_TIME.exec(t);
  if (!m) return undefined;
  const ms = Date.parse(m[1] ? t : `${t}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** xs:dateTime in UTC, `Z` suffixed. */
export function utc(ms: number): string {
  return new Date(ms).toISOString();
}
