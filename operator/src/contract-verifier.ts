import type { BusPort } from '../../core/src/bus/bus-port.js';
import { BUS_CONTRACTS } from '../../core/src/contracts/bus-contracts.js';
import { WIRE_LIMITS } from '../../core/src/contracts/limits.js';
import { parseWirePayload } from '../../core/src/contracts/parse-wire.js';

/** The topics the verifier samples: the two the spec gives a measurable rate for. */
export const VERIFIED_SUFFIXES = ['telemetry', 'dets'] as const;
type Suffix = (typeof VERIFIED_SUFFIXES)[number];

export interface TopicReport {
  topic: string;
  samples: number;
  valid: number;
  validRatio: number;
  rateHz: number;
  /** Up to five distinct reasons messages were invalid, with counts. */
  invalidReasons: { reason: string; count: number }[];
  failures: string[];
}

export interface ContractReport {
  deviceId: string;
  durationS: number;
  bounds: { minHz: number; maxHz: number; minValidRatio: number };
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
    minHz: options.minHz ?? WIRE_LIMITS.acceptedRateHz.min,
    maxHz: options.maxHz ?? WIRE_LIMITS.acceptedRateHz.max,
    minValidRatio: options.minValidRatio ?? WIRE_LIMITS.minValidRatio,
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
    const rateHz = round2(t.total / elapsedS);
    const validRatio = t.total === 0 ? 0 : round2(t.valid / t.total);
    const failures: string[] = [];
    if (t.total === 0) failures.push('no messages received');
    else if (validRatio < bounds.minValidRatio) failures.push(`only ${pct(validRatio)} of samples valid (at least ${pct(bounds.minValidRatio)} required)`);
    if (t.total > 0 && (rateHz < bounds.minHz || rateHz > bounds.maxHz)) failures.push(`rate ${rateHz} Hz outside ${bounds.minHz}-${bounds.maxHz} Hz`);
    const invalidReasons = [...t.reasons.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([reason, count]) => ({ reason, count }));
    return { topic: `devices/${options.deviceId}/${suffix}`, samples: t.total, valid: t.valid, validRatio, rateHz, invalidReasons, failures };
  });
  return { deviceId: options.deviceId, durationS: round2(elapsedS), bounds, topics, passed: topics.every((t) => t.failures.length === 0) };
}

export function formatReport(report: ContractReport): string {
  const lines = [`contract verification of ${report.deviceId} over ${report.durationS} s: ${report.passed ? 'PASS' : 'FAIL'}`];
  for (const t of report.topics) {
    lines.push(
      `  ${t.topic}: ${t.samples} samples, ${t.valid} valid (${pct(t.validRatio)}), ${t.rateHz} Hz${t.failures.length ? ` — FAIL: ${t.failures.join('; ')}` : ' — ok'}`,
    );
    for (const r of t.invalidReasons) lines.push(`      ${r.count}× ${r.reason}`);
  }
  lines.push(`  bounds: ${report.bounds.minHz}-${report.bounds.maxHz} Hz, at least ${pct(report.bounds.minValidRatio)} valid`);
  return lines.join('\n');
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const pct = (r: number) => `${Math.round(r * 100)}%`;
