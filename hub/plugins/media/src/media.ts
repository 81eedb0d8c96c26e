import { LookoutError } from 'lookout/core';
import type { DeviceHttpsFetch } from './device-https-fetch.js';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { DebugRing } from '../../debug-ring/src/service.js';
import type { DeviceSsh } from '../../device-ssh/src/service.js';
import type { DeviceRegistry, RegisteredDevice } from '../../registry/src/service.js';
import type { DeviceTools } from '../../tools-proxy/src/service.js';
import type { PullJob, PullOutcome, TransferOrigin, TransferQueue } from '../../transfers/src/service.js';
import {
  discoverChunks,
  type ChunkRecord,
  type Discovery,
  type DiscoveryDeps,
  type DiscoveryQuery,
  type DiscoveryStep,
  type StepFailure,
} from './chunk-discovery.js';
import { fetchChunk, pullChunk, sourcesDirOf, type FetcherDeps } from './chunk-fetcher.js';
import { DeviceHttpRecordings } from './device-http-recordings.js';
import type { LocalRecordings } from './recordings-access.js';
import { RecorderWatch } from './recorder-watch.js';
import { VARIANT_SUFFIX, type ClipVariant } from './transcode-args.js';
import type { CachedClip, TranscodeCache } from './transcode-cache.js';

export interface MediaDeps {
  registry: DeviceRegistry;
  cache: BusCache;
  tools: DeviceTools;
  ring: DebugRing;
  ssh: () => DeviceSsh | undefined;
  local: LocalRecordings | undefined;
  /** The hub's transfer queue when its plugin runs (looked up per use): chunks are pulled through it. */
  transfers?: () => TransferQueue | undefined;
  /** A device's tool token (derived from the fleet secret), or undefined to send none: what /recordings asks for. */
  credential: (deviceId: string) => string | undefined;
  /** Recordings from a device whose tool server speaks TLS: the fleet CA and the device's pinned certificate. */
  https?: DeviceHttpsFetch;
  clips: TranscodeCache;
  cacheDir: string;
  stepTimeoutMs: number;
  fetchTimeoutMs: number;
  discoveryConcurrency: number;
  signal: AbortSignal;
}

/** Bound on the frame rates remembered from chunk metadata. */
const MAX_KNOWN = 10_000;

/**
 * What the routes, the tool fallbacks and the incident watcher share: chunk discovery through the
 * chain of sources, clips from the transcode cache (their chunks fetched from the device's tool
 * server, a local folder or SFTP), play URLs,
 * the recorder states learned and the ring records of failing steps.
 */
export class Media {
  readonly recorder: RecorderWatch;
  private readonly discovery: DiscoveryDeps;
  private readonly fetcher: FetcherDeps;
  private readonly fps = new Map<string, number>();

  constructor(readonly deps: MediaDeps) {
    this.recorder = new RecorderWatch(deps.ring);
    this.discovery = {
      cache: deps.cache,
      tools: deps.tools,
      ssh: deps.ssh,
      local: deps.local,
      stepTimeoutMs: deps.stepTimeoutMs,
      onFailure: (deviceId, f) => this.stepFailed(deviceId, f),
    };
    this.fetcher = {
      dir: sourcesDirOf(deps.cacheDir),
      device: new DeviceHttpRecordings({ device: (id) => deps.registry.get(id), credential: deps.credential, ...(deps.https ? { https: deps.https } : {}) }),
      ssh: deps.ssh,
      local: deps.local,
      timeoutMs: deps.fetchTimeoutMs,
      ...(deps.transfers ? { transfers: deps.transfers } : {}),
      knownFps: (deviceId, chunk) => this.fps.get(`${deviceId}/${chunk}`) ?? this.cachedFps(deviceId, chunk),
      signal: deps.signal,
      onFailure: (deviceId, chunk, source, e) =>
        this.deps.ring.record({
          kind: 'recording_fail',
          device_id: deviceId,
          message: `chunk fetch ${source}: ${chunk}: ${e.code}: ${e.message}`.slice(0, 300),
          details: { step: `fetch_${source}`, chunk, code: e.code },
        }),
    };
  }

  /** The chain a route walks: the steps it names, with `local` where configured and SSH's steps always (their failure says why). */
  steps(wanted: readonly DiscoveryStep[]): DiscoveryStep[] {
    return wanted.filter((s) => s !== 'local' || this.deps.local !== undefined);
  }

  async discover(device: RegisteredDevice, steps: readonly DiscoveryStep[], q: DiscoveryQuery): Promise<Discovery> {
    const found = await discoverChunks(this.discovery, device, this.steps(steps), q);
    this.remember(device.deviceId, found.chunks);
    return found;
  }

  /**
   * The mp4 of a chunk: from the cache, else fetched from the device and built (once, however many
   * ask). `signal`: the request's; when it goes away it stops waiting for a build slot. `origin`:
   * who asked, for the transfer queue's listing.
   */
  clip(deviceId: string, chunk: string, variant: ClipVariant, signal?: AbortSignal, origin: TransferOrigin = 'clip'): Promise<CachedClip> {
    return this.deps.clips
      .get(`${deviceId}/${chunk}`, variant, () => fetchChunk(this.fetcher, deviceId, chunk, origin), signal)
      .catch((err: unknown) => {
        // The client went away: nothing failed.
        if (signal?.aborted) throw err;
        const e = err instanceof LookoutError ? err : new LookoutError('transcode_failed', String(err));
        this.deps.ring.record({
          kind: 'recording_fail',
          device_id: deviceId,
          message: `${chunk} (${variant}): ${e.code}: ${e.message}`.slice(0, 300),
          details: { step: 'clip', chunk, variant, code: e.code },
        });
        throw e;
      });
  }

  /** Relative URLs of a chunk's two mp4s on this hub. */
  playUrls(deviceId: string, chunk: string): { playUrl: string; playUrlHevc: string } {
    const base = `/media/clips/${encodeURIComponent(deviceId)}/${encodeURIComponent(chunk.replace(/\.h265$/, ''))}`;
    return { playUrl: base + VARIANT_SUFFIX.h264, playUrlHevc: base + VARIANT_SUFFIX.hevc };
  }

  /** A device the hub knows by id (registry or cache), for routes that name one in their path. */
  knownDevice(deviceId: string): boolean {
    return this.deps.registry.get(deviceId) !== undefined || this.deps.cache.device(deviceId) !== undefined;
  }

  /** Devices of a role label (or id); all registered devices without one. */
  devicesOf(shadow: string | undefined): RegisteredDevice[] {
    const all = this.deps.registry.list();
    if (shadow === undefined) return all;
    return all.filter((d) => d.deviceId === shadow || d.labels.includes(shadow) || d.roles.includes(shadow));
  }

  private remember(deviceId: string, chunks: ChunkRecord[]): void {
    for (const c of chunks) {
      if (typeof c.fps !== 'number' || !(c.fps > 0)) continue;
      if (this.fps.size >= MAX_KNOWN) this.fps.clear();
      this.fps.set(`${deviceId}/${c.name}`, c.fps);
    }
  }

  private cachedFps(deviceId: string, chunk: string): number | undefined {
    const c = this.deps.cache.device(deviceId)?.recentChunks.find((x) => x.name === chunk);
    return typeof c?.fps === 'number' && c.fps > 0 ? c.fps : undefined;
  }

  /** The transfer queue's puller: one attempt at a chunk through the fetcher's sources. */
  pull(job: PullJob): Promise<PullOutcome> {
    return pullChunk(this.fetcher, job);
  }

  private stepFailed(deviceId: string, f: StepFailure): void {
    this.deps.ring.record({
      kind: 'recording_fail',
      device_id: deviceId,
      message: `chunk discovery ${f.step}: ${f.code}: ${f.message}`.slice(0, 300),
      details: { step: f.step, code: f.code },
    });
  }
}
