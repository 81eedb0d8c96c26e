import { BUS_CONTRACTS } from '../../core/src/contracts/bus-contracts.js';
import { MqttBus } from '../../lib/mqtt/mqtt-bus.js';
import { SIM_KINDS, type SimKind } from './sim-fleet.js';

/** Sequence numbers seen for one device and topic: a growable bitmap. */
class SeqSet {
  private bits = new Uint8Array(256);
  distinct = 0;
  duplicates = 0;
  maxSeq = 0;

  add(seq: number): void {
    if (!Number.isInteger(seq) || seq < 1 || seq > 10_000_000) return;
    const byte = seq >> 3;
    if (byte >= this.bits.length) {
      const grown = new Uint8Array(Math.max(this.bits.length * 2, byte + 1));
      grown.set(this.bits);
      this.bits = grown;
    }
    const mask = 1 << (seq & 7);
    if (this.bits[byte] & mask) {
      this.duplicates++;
      return;
    }
    this.bits[byte] |= mask;
    this.distinct++;
    if (seq > this.maxSeq) this.maxSeq = seq;
  }

  /** Sequence numbers from 1 to `upTo` never seen. */
  missing(upTo: number): number {
    let seen = 0;
    for (let s = 1; s <= upTo; s++) if ((this.bits[s >> 3] ?? 0) & (1 << (s & 7))) seen++;
    return upTo - seen;
  }
}

/**
 * An independent subscriber beside the hub (a persistent session on the same broker): it sees what
 * the broker delivered of each simulated device's sequence numbers (gaps: lost by the broker;
 * duplicates: QoS 1 redelivered) and counts the real devices' messages per topic. What it sees tells
 * a loss in the broker from a loss in the hub.
 */
export class Witness {
  readonly seqs = new Map<string, SeqSet>();
  readonly realCounts = new Map<string, Map<string, number>>();
  floodIgnored = 0;
  private bus: MqttBus | null = null;

  constructor(
    private readonly simIds: Set<string>,
    private readonly realIds: Set<string>,
  ) {}

  async start(url: string): Promise<void> {
    this.bus = MqttBus.create({ url, clientId: 'soak-witness', clean: false, reconnect: { initialMs: 200, maxMs: 5_000 }, connectTimeoutMs: 20_000 });
    const subscribed = ['telemetry', 'dets', 'health', 'status', 'hello'].map((s) =>
      this.bus!.subscribe(`devices/+/${s}`, (topic, payload) => this.onMessage(topic, payload)),
    );
    await this.bus.start();
    await Promise.all(subscribed);
  }

  stats(): { connects: number; sessionPresent: boolean; messagesIn: number } {
    const s = this.bus?.stats();
    return { connects: s?.connects ?? 0, sessionPresent: s?.sessionPresent ?? false, messagesIn: s?.messagesIn ?? 0 };
  }

  of(deviceId: string, kind: SimKind): SeqSet | undefined {
    return this.seqs.get(`${deviceId}/${kind}`);
  }

  realCount(deviceId: string, suffix: string): number {
    return this.realCounts.get(deviceId)?.get(suffix) ?? 0;
  }

  async close(): Promise<void> {
    await this.bus?.close().catch(() => undefined);
  }

  private validReal(deviceId: string, suffix: string, payload: Buffer): boolean {
    if (payload.length > 64 * 1024 || !Object.hasOwn(BUS_CONTRACTS, suffix)) return false;
    let value: unknown;
    try {
      value = JSON.parse(payload.toString('utf8'));
    } catch {
      return false;
    }
    if (typeof value !== 'object' || value === null || 'soak_device' in value) return false;
    const named = (value as { device_id?: unknown }).device_id;
    if (named !== undefined && named !== deviceId) return false;
    return BUS_CONTRACTS[suffix as keyof typeof BUS_CONTRACTS].schema.safeParse(value).success;
  }

  private onMessage(topic: string, payload: Buffer): void {
    const [, deviceId, suffix] = topic.split('/');
    if (this.realIds.has(deviceId)) {
      // The flood writes on these topics too: only a valid message of the device itself counts.
      if (!this.validReal(deviceId, suffix, payload)) return;
      let m = this.realCounts.get(deviceId);
      if (!m) this.realCounts.set(deviceId, (m = new Map()));
      m.set(suffix, (m.get(suffix) ?? 0) + 1);
      return;
    }
    if (!this.simIds.has(deviceId) || !(SIM_KINDS as readonly string[]).includes(suffix)) return;
    // The flood publishes garbage on these topics too: only the simulator's own messages count.
    if (payload.length > 4096) return;
    let seq: unknown;
    let from: unknown;
    try {
      const parsed = JSON.parse(payload.toString('utf8')) as { soak_seq?: unknown; soak_device?: unknown } | null;
      seq = parsed?.soak_seq;
      from = parsed?.soak_device;
    } catch {
      return;
    }
    if (typeof seq !== 'number' || from !== deviceId) {
      this.floodIgnored++;
      return;
    }
    const key = `${deviceId}/${suffix}`;
    let set = this.seqs.get(key);
    if (!set) this.seqs.set(key, (set = new SeqSet()));
    set.add(seq);
  }
}
