import type { BusCache } from '../../bus-cache/src/service.js';

/**
 * Where an answer's numbers come from (issue 29: device counts are authoritative; a language model
 * may describe them, never override them): the devices, and the span of time their messages or
 * calls cover. `kind` says whether the span is of the live cache, a call made now, or (later) the
 * fleet history.
 */
export interface Sources {
  devices: string[];
  from: string | null;
  to: string | null;
  kind: 'live' | 'call' | 'history';
}

/**
 * The devices' newest messages in the hub's bus cache, from the oldest of them to the newest. Only
 * devices the cache holds a message of are named: one that never spoke contributes no number.
 */
export function liveSources(cache: BusCache, deviceIds: readonly string[]): Sources {
  let from: number | undefined;
  let to: number | undefined;
  const devices: string[] = [];
  for (const id of deviceIds) {
    const at = cache.device(id)?.newestAt;
    if (at === undefined || at <= 0) continue;
    devices.push(id);
    from = from === undefined ? at : Math.min(from, at);
    to = to === undefined ? at : Math.max(to, at);
  }
  return { devices: devices.sort(), from: iso(from), to: iso(to), kind: 'live' };
}

/** One call on one device, from when it was sent to when it came back. */
export function callSources(deviceId: string, startedAt: number, endedAt: number): Sources {
  return { devices: [deviceId], from: iso(startedAt), to: iso(endedAt), kind: 'call' };
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}
