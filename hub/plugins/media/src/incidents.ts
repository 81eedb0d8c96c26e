import { LookoutError, toLookoutError } from 'lookout/core';
import { VideoUnderstandResultSchema } from 'lookout/core/contracts';
import { AdmissionQueue } from 'lookout/lib/limits';
import type { IngestedMessage } from '../../bus-cache/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { ChunkRecord, DiscoveryStep } from './chunk-discovery.js';
import type { Media } from './media.js';

export interface IncidentOptions {
  /** Seconds of video either side of the incident that video_understand looks at. */
  windowS: number;
  /** How long to wait for the chunk covering the incident to be complete (it may be the one being written). */
  waitMs: number;
  pollMs: number;
  /** Incidents handled at once; more wait, and past `maxQueued` waiting the newest is dropped (recorded). */
  concurrency: number;
  maxQueued: number;
  signal: AbortSignal;
  sleep: (ms: number) => Promise<void>;
}

/** The chunk index is asked of the device first (the cache's data_manifest may predate the incident). */
const STEPS: DiscoveryStep[] = ['device', 'local', 'ssh_sftp', 'ssh_listing', 'data_manifest'];

/**
 * On `devices/<id>/events/incident`: the hub finds the chunk covering the incident (waiting while
 * it is still being written), pulls its clip into the cache, and calls the device's
 * video_understand for the incident's window. The result is kept with the incident (its
 * anomaly_alerts entry gains `video_understanding`, pending at first) and recorded in the ring.
 */
export class IncidentWatcher {
  private readonly limiter: AdmissionQueue;

  constructor(
    private readonly media: Media,
    private readonly o: IncidentOptions,
  ) {
    // The bound is checked in handle (a dropped incident is recorded), so the queue's own is open.
    this.limiter = new AdmissionQueue({ concurrency: o.concurrency, maxWaiting: Infinity });
  }

  handle(m: IngestedMessage): void {
    if (m.suffix !== 'events/incident') return;
    const device = this.media.deps.registry.get(m.deviceId);
    const annotate = (fields: Record<string, unknown>) =>
      this.media.deps.cache.annotateAlert(m.deviceId, m.topic, m.receivedAt, { video_understanding: fields });
    if (!device) {
      annotate({ status: 'error', error: { code: 'target_unknown', message: `${m.deviceId} is not registered: no tool server to ask` } });
      return;
    }
    if (this.limiter.waiting >= this.o.maxQueued) {
      annotate({ status: 'error', error: { code: 'device_busy', message: `more than ${this.o.maxQueued} incidents wait: this one is not analysed` } });
      this.record(m.deviceId, 'incident dropped: too many incidents waiting', { code: 'device_busy' });
      return;
    }
    annotate({ status: 'pending' });
    void this.limiter
      .run(() => this.understand(device, m))
      .then(
        (result) => annotate(result),
        (err: unknown) => {
          const e = toLookoutError(err);
          annotate({ status: 'error', error: { code: e.code, message: e.message } });
        },
      );
  }

  private async understand(device: RegisteredDevice, m: IngestedMessage): Promise<Record<string, unknown>> {
    const stamped = typeof m.message.timestamp === 'string' ? Date.parse(m.message.timestamp) : NaN;
    const at = Number.isFinite(stamped) ? stamped : m.receivedAt;
    const started = Date.now();
    const out: Record<string, unknown> = { status: 'ok', incident_at: new Date(at).toISOString(), chunk: null };
    let chunkName: string | null = null;
    // The covering chunk and its clip: what an operator opens; missing only weakens the answer.
    try {
      const chunk = await this.coveringChunk(device, at);
      out.chunk = chunkName = chunk.name;
      Object.assign(out, this.media.playUrls(device.deviceId, chunk.name));
      try {
        await this.media.clip(device.deviceId, chunk.name, 'h264', undefined, 'incident');
        out.pulled = true;
      } catch (err) {
        const e = toLookoutError(err);
        out.pulled = false;
        out.pull_error = { code: e.code, message: e.message };
      }
    } catch (err) {
      const e = toLookoutError(err);
      out.pulled = false;
      out.pull_error = { code: e.code, message: e.message };
      this.record(device.deviceId, `incident clip not found: ${e.message}`, { code: e.code });
    }
    const window = { start: new Date(at - this.o.windowS * 1000).toISOString(), end: new Date(at + this.o.windowS * 1000).toISOString() };
    out.window = window;
    try {
      const signal = AbortSignal.any([this.o.signal, AbortSignal.timeout(Math.max(this.media.deps.stepTimeoutMs, 30_000))]);
      const outcome = await this.media.deps.tools.call(device, 'video_understand', { ...window, describe: true }, signal);
      if (outcome.status === 'error') throw new LookoutError('tool_failed', `video_understand: ${outcome.error}`, { details: { code: outcome.code } });
      const parsed = VideoUnderstandResultSchema.safeParse(outcome.result);
      if (!parsed.success) throw new LookoutError('tool_failed', `video_understand answered another shape: ${parsed.error.issues[0]?.message ?? ''}`);
      out.result = parsed.data;
    } catch (err) {
      const e = toLookoutError(err);
      out.status = chunkName ? 'partial' : 'error';
      out.error = { code: e.code, message: e.message };
      this.record(device.deviceId, `video_understand failed: ${e.message}`, { code: e.code });
    }
    out.finished_at = new Date().toISOString();
    out.ms = Date.now() - started;
    const result = out.result as { person_max_count?: number; track_count?: number } | undefined;
    this.media.deps.ring.record({
      kind: 'video_understand',
      device_id: device.deviceId,
      topic: m.topic,
      message: result
        ? `incident at ${String(out.incident_at)}: ${result.person_max_count ?? 0} persons at most, ${result.track_count ?? 0} tracks${chunkName ? ` (${chunkName})` : ''}`
        : `incident at ${String(out.incident_at)}: ${out.status === 'error' ? 'not understood' : 'clip only'}`,
      details: out,
    });
    return out;
  }

  /** The chunk whose time span holds `at`, asked again every pollMs until waitMs (the recorder may still be writing it). */
  private async coveringChunk(device: RegisteredDevice, at: number): Promise<ChunkRecord> {
    const deadline = Date.now() + this.o.waitMs;
    for (;;) {
      const found = await this.media.discover(device, STEPS, { limit: 50, signal: this.o.signal });
      const hit = found.chunks.find((c) => covers(c, at));
      if (hit) return hit;
      if (Date.now() + this.o.pollMs > deadline) {
        throw new LookoutError(
          'recording_not_found',
          `no chunk of ${device.deviceId} covers ${new Date(at).toISOString()} (${found.source}, ${found.chunks.length} chunks looked at)`,
        );
      }
      await this.o.sleep(this.o.pollMs);
    }
  }

  private record(deviceId: string, message: string, details: Record<string, unknown>): void {
    this.media.deps.ring.record({ kind: 'recording_fail', device_id: deviceId, message: message.slice(0, 300), details: { step: 'incident', ...details } });
  }
}

/** [started_at, ended_at) of a chunk (ended_at, else started_at + duration_s) holds `at`. */
function covers(c: ChunkRecord, at: number): boolean {
  const start = typeof c.started_at === 'string' ? Date.parse(c.started_at) : NaN;
  if (!Number.isFinite(start)) return false;
  const endGiven = typeof c.ended_at === 'string' ? Date.parse(c.ended_at) : NaN;
  const end = Number.isFinite(endGiven) ? endGiven : typeof c.duration_s === 'number' ? start + c.duration_s * 1000 : NaN;
  return Number.isFinite(end) && start <= at && at < end;
}
