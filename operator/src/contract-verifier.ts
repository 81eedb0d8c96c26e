import type { BusPort } from '../../core/src/bus/bus-port.js';
import { BUS_CONTRACTS } from '../../core/src/contracts/bus-contracts.js';
import { WIRE_LIMITS } from '../../core/src/contracts/limits.js';
import { parseWirePayload } from '../../core/src/contracts/parse-wire.js';

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
  }
  lines.push(`  bounds: ${bounds.min_hz}-${bounds.max_hz} Hz, at least ${pct(bounds.min_valid_ratio)} valid`);
  return lines.join('\n');
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
