import type { BusPort } from 'lookout/core/host';
import { BUS_CONTRACTS, WIRE_LIMITS, parseWirePayload } from 'lookout/core/contracts';

/** The topics the verifier samples: the two the spec gives a measurable rate for. */
export const VERIFIED_SUFFIXES = ['telemetry', 'dets'] as const;
type Suffix = (typeof VERIFIED_SUFFIXES)[number];

/**
 * The report, in the wire's snake_case (it is what `--json` prints). Ratios and rates are the raw
 * measurements the verdict was taken on, so a reader comparing them with the bounds agrees with it;
 * only the readable report rounds.
 */
export interface TopicReport {
  topic: string;
  samples: number;
  valid: number;
  valid_ratio: number;
  rate_hz: number;
  /** Up to five distinct reasons messages were invalid, with counts. */
  invalid_reasons: { reason: string; count: number }[];
  failures: string[];
  /** What the device announced that explains a silence (a thermal suspension): reasons, not failures. */
  reasons?: string[];
}

export interface ContractReport {
  device_id: string;
  duration_s: number;
  bounds: { min_hz: number; max_hz: number; min_valid_ratio: number };
  topics: TopicReport[];
  passed: boolean;
}

export interface VerifyOptions {
  bus: BusPort;
  deviceId: string;
  durationMs: number;
  minHz?: number;
  maxHz?: number;
  minValidRatio?: number;
}

/**
 * Samples a device's telemetry and dets for a while, validates every message against the wire
 * contracts and measures the rates. It fails when fewer than 80% of a topic's samples are valid or
 * a rate is outside 3-15 Hz (spec 01, "Limits"), and says why.
 */
export async function verifyContract(options: VerifyOptions): Promise<ContractReport> {
  const bounds = {
    min_hz: options.minHz ?? WIRE_LIMITS.acceptedRateHz.min,
    max_hz: options.maxHz ?? WIRE_LIMITS.acceptedRateHz.max,
    min_valid_ratio: options.minValidRatio ?? WIRE_LIMITS.minValidRatio,
  };
  const samples = new Map<Suffix, { total: number; valid: number; reasons: Map<string, number> }>();
  const unsubscribes: (() => Promise<void>)[] = [];
  for (const suffix of VERIFIED_SUFFIXES) {
    const tally = { total: 0, valid: 0, reasons: new Map<string, number>() };
    samples.set(suffix, tally);
    const topic = `devices/${options.deviceId}/${suffix}`;
    unsubscribes.push(
      await options.bus.subscribe(topic, (_t, payload) => {
        tally.total++;
        try {
          parseWirePayload(BUS_CONTRACTS[suffix].schema, payload, suffix);
          tally.valid++;
        } catch (err) {
          const reason = (err as Error).message.replace(/^\S+ /, '');
          tally.reasons.set(reason, (tally.reasons.get(reason) ?? 0) + 1);
        }
      }),
    );
  }
  const suspension = await watchAnnouncedSuspension(options.bus, options.deviceId);
  unsubscribes.push(suspension.off);
  const started = Date.now();
  await new Promise((resolve) => setTimeout(resolve, options.durationMs));
  const elapsedS = (Date.now() - started) / 1000;
  for (const off of unsubscribes) await off();

  const topics = VERIFIED_SUFFIXES.map((suffix): TopicReport => {
    const t = samples.get(suffix)!;
    // Raw values: rounding first would let 79.5% valid or 2.996 Hz pass a bound of 80% or 3 Hz.
    const rateHz = t.total / elapsedS;
    const validRatio = t.total === 0 ? 0 : t.valid / t.total;
    const failures: string[] = [];
    if (t.total === 0) failures.push('no messages received');
    else if (validRatio < bounds.min_valid_ratio)
      failures.push(`only ${pct(validRatio, bounds.min_valid_ratio)} of samples valid (at least ${pct(bounds.min_valid_ratio)} required)`);
    if (t.total > 0 && (rateHz < bounds.min_hz || rateHz > bounds.max_hz))
      failures.push(`rate ${hz(rateHz, nearest(rateHz, bounds))} Hz outside ${bounds.min_hz}-${bounds.max_hz} Hz`);
    const invalid_reasons = [...t.reasons.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([reason, count]) => ({ reason, count }));
    return {
      topic: `devices/${options.deviceId}/${suffix}`,
      samples: t.total,
      valid: t.valid,
      valid_ratio: validRatio,
      rate_hz: rateHz,
      invalid_reasons,
      failures,
    };
  });
  excuseAnnouncedSuspension(topics, suspension.summary(elapsedS), bounds);
  return { device_id: options.deviceId, duration_s: elapsedS, bounds, topics, passed: topics.every((t) => t.failures.length === 0) };
}

export function formatReport(report: ContractReport): string {
  const { bounds } = report;
  const lines = [`contract verification of ${report.device_id} over ${hz(report.duration_s)} s: ${report.passed ? 'PASS' : 'FAIL'}`];
  for (const t of report.topics) {
    const share = pct(t.valid_ratio, bounds.min_valid_ratio);
    const rate = hz(t.rate_hz, nearest(t.rate_hz, bounds));
    lines.push(
      `  ${t.topic}: ${t.samples} samples, ${t.valid} valid (${share}), ${rate} Hz${t.failures.length ? ` — FAIL: ${t.failures.join('; ')}` : ' — ok'}`,
    );
    for (const r of t.invalid_reasons) lines.push(`      ${r.count}× ${r.reason}`);
    for (const r of t.reasons ?? []) lines.push(`      announced: ${r}`);
  }
  lines.push(`  bounds: ${bounds.min_hz}-${bounds.max_hz} Hz, at least ${pct(bounds.min_valid_ratio)} valid`);
  return lines.join('\n');
}

interface AnnouncedSuspension {
  /** Seconds of the sample the device said detection was suspended (share of its telemetry saying so). */
  suspended_s: number;
  /** The rest of the sample, when detection ran. */
  running_s: number;
  since: string | null;
  reason: string | null;
}

/**
 * Listens for the device's own word that detection is suspended (`telemetry.detection`), which its
 * telemetry says on every frame while the thermal governor holds neural work.
 */
async function watchAnnouncedSuspension(bus: BusPort, deviceId: string): Promise<{ off: () => Promise<void>; summary(elapsedS: number): AnnouncedSuspension }> {
  let total = 0;
  let suspended = 0;
  let since: string | null = null;
  let reason: string | null = null;
  const off = await bus.subscribe(`devices/${deviceId}/telemetry`, (_t, payload) => {
    total++;
    try {
      const block = (JSON.parse(payload.toString('utf8')) as { telemetry?: Record<string, unknown> }).telemetry;
      if (block?.detection !== 'suspended') return;
      suspended++;
      since ??= typeof block.suspended_since === 'string' ? block.suspended_since : null;
      reason ??= typeof block.detection_reason === 'string' ? block.detection_reason : null;
    } catch {
      // An unreadable message is the telemetry tally's to count; it announces nothing.
    }
  });
  return {
    off,
    summary(elapsedS) {
      const suspendedS = total === 0 ? 0 : (elapsedS * suspended) / total;
      return { suspended_s: suspendedS, running_s: elapsedS - suspendedS, since, reason };
    },
  };
}

/**
 * An announced suspension is a reason, not a failure: dets stop while the thermal governor holds
 * neural work. Their rate is judged over the time detection ran; with too little of it to judge
 * (under a second), the silence is reported as the announced reason. Invalid messages still fail.
 */
function excuseAnnouncedSuspension(topics: TopicReport[], s: AnnouncedSuspension, bounds: ContractReport['bounds']): void {
  const dets = topics.find((t) => t.topic.endsWith('/dets'));
  if (!dets || s.suspended_s === 0) return;
  const what = `detection suspended for ${hz(s.suspended_s)} s of the sample${s.since ? ` (since ${s.since})` : ''}${s.reason ? `: ${s.reason}` : ''}`;
  const silence = (f: string) => f === 'no messages received' || f.startsWith('rate ');
  if (!dets.failures.some(silence)) {
    dets.reasons = [what];
    return;
  }
  dets.failures = dets.failures.filter((f) => !silence(f));
  if (s.running_s < 1) {
    dets.reasons = [`${what}; too little time with detection running to judge the dets rate`];
    return;
  }
  const rate = dets.samples / s.running_s;
  if (dets.samples === 0) dets.failures.push(`no messages received in the ${hz(s.running_s)} s detection ran`);
  else if (rate < bounds.min_hz || rate > bounds.max_hz)
    dets.failures.push(`rate ${hz(rate, nearest(rate, bounds))} Hz over the ${hz(s.running_s)} s detection ran, outside ${bounds.min_hz}-${bounds.max_hz} Hz`);
  dets.reasons = [`${what}; dets at ${hz(rate)} Hz over the ${hz(s.running_s)} s detection ran`];
}

/**
 * A measurement rounded for reading, with as many more decimals as it takes not to print equal to
 * the bound it was compared with: 79.5% beside "at least 80%" reads 79.5%, never 80%.
 */
function rounded(value: number, decimals: number, bound?: number): string {
  for (let d = decimals; d <= 6; d++) {
    const r = Math.round(value * 10 ** d) / 10 ** d;
    if (bound === undefined || value === bound || r !== bound) return String(r);
  }
  return String(value);
}

const hz = (rate: number, bound?: number) => rounded(rate, 2, bound);
const pct = (ratio: number, bound?: number) => `${rounded(ratio * 100, 0, bound === undefined ? undefined : bound * 100)}%`;
/** The rate bound a rate is closest to: the one its rounding could make it look equal to. */
const nearest = (rate: number, b: ContractReport['bounds']) => (Math.abs(rate - b.min_hz) <= Math.abs(rate - b.max_hz) ? b.min_hz : b.max_hz);
