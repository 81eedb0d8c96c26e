import { mkdir } from 'node:fs/promises';
import {
  DataManifestCommandSchema,
  ListRecordingChunksArgsSchema,
  ListRecordingChunksResultSchema,
  RecordingStatusResultSchema,
  SerialQueue,
  recordingsRoot,
  RecordingFilesToken,
  VideoUnderstandArgsSchema,
  VideoUnderstandResultSchema,
  busTopic,
  definePlugin,
  toLookoutError,
  z,
  type ChunkSidecar,
  type DataManifestCommand,
} from 'lookout/core';
import { EncodedVideoToken } from '../../encode/src/service.js';
import { DetectionPipelineToken } from '../../detector/src/service.js';
import { ChunkIndex } from './chunk-index.js';
import { ChunkWriter, type CompletedChunk } from './chunk-writer.js';
import { RecorderConfigSchema } from './config.js';
import { detsLine } from './detection-log.js';
import { readManifest, writeManifest } from './manifest-file.js';
import { pruneUntilHealthy } from './prune.js';
import { recommendation } from './recommendation.js';

import { recoverRecordings } from './recovery.js';
import { buildSidecar, writeSidecar } from './sidecar.js';
import { writeStatusFile, type RecorderStatusFile } from './status-file.js';
import { freeBytes, measureStorage, type StorageState } from './storage.js';
import { videoUnderstand } from './video-understand.js';

/** data_manifest requests answered per second; a flood beyond is dropped (logged), not queued. */
const MANIFEST_REQUESTS_PER_S = 10;

/**
 * The device recorder (layer 0: every layer records). It writes the encoder's one H.265 stream as
 * chunks of about CHUNK_SECONDS with a sidecar and a detection log each, keeps `.h265_status` and
 * `recent_manifest.jsonl`, repairs the folder after a crash, prunes at CRITICAL storage, publishes
 * `data_manifest` (on connect, on `cmd/data_manifest`, after each chunk) and answers the recording tools.
 */
export default definePlugin({
  name: 'recorder',
  version: '1.0.0',
  core: '^1',
  description: 'H.265 chunks with sidecars, .h265_status, recent_manifest.jsonl, data_manifest and the recording tools',
  layer: 'layer0',
  requires: [EncodedVideoToken],
  optionalRequires: [DetectionPipelineToken],
  provides: [RecordingFilesToken],
  config: RecorderConfigSchema,
  topics: [busTopic('data_manifest')],
  subscriptions: ['cmd/data_manifest'],
  startTimeoutMs: 120_000,
  tools: [
    {
      name: 'get_recording_status',
      readOnly: true,
      description:
        'Recording status: total_chunks, inventory_count, storage_health (OK, WARNING, CRITICAL), storage_free_gb, storage_used_pct, latest_chunk, is_writing_data and a recommendation (empty when recording is fine)',
      input: z.object({}),
      output: RecordingStatusResultSchema,
    },
    {
      name: 'list_recording_chunks',
      readOnly: true,
      description: 'Complete recording chunks with their sidecar fields, newest first, paged (limit, offset); justified filters justified or unjustified ones',
      input: ListRecordingChunksArgsSchema,
      output: ListRecordingChunksResultSchema,
    },
    {
      name: 'video_understand',
      readOnly: true,
      description:
        "A clip (chunk, or start and end) from the device's detection logs: counts, classes and track ids; plus a description from the configured describer (VIDEO_DESCRIBER_URL), which never changes a count",
      input: VideoUnderstandArgsSchema,
      output: VideoUnderstandResultSchema,
    },
  ],
  async start(ctx) {
    const { config, runtime, log, clock } = ctx;
    const video = ctx.services.get(EncodedVideoToken);
    const gate = config.JUSTIFY_PERSON_CONFIDENCE;
    const gates = { person: gate, weapon: config.JUSTIFY_WEAPON_CONFIDENCE };
    const thresholds = { warnPct: config.STORAGE_WARN_PCT, criticalPct: config.STORAGE_CRITICAL_PCT };
    const dir = recordingsRoot(runtime.dataDir, config.RECORDINGS_DIR);
    const startedAtMs = clock.now();
    await mkdir(dir, { recursive: true });
    // The tool server serves this folder's recording files read-only (GET /recordings/<file>): playback without SSH.
    ctx.services.provide(RecordingFilesToken, { root: dir });

    // Repair and the manifest rewrite are best effort: on a full disk they fail, and the recorder must
    // still start, say CRITICAL and record again once there is room (only chunks with a sidecar are listed).
    const before = await readManifest(dir);
    try {
      const recovery = await recoverRecordings({ dir, fps: video.fps, width: video.width, height: video.height, gates });
      for (const r of recovery.removed) log.warn({ name: r.name, reason: r.reason }, 'recording leftover removed');
      if (recovery.recovered.length + recovery.sidecarsRebuilt.length > 0) {
        log.info({ recovered: recovery.recovered, sidecars_rebuilt: recovery.sidecarsRebuilt }, 'recordings recovered after an unclean stop');
      }
    } catch (err) {
      log.error({ code: toLookoutError(err).code }, `recovery of ${dir} incomplete: ${(err as Error).message}`);
    }
    const index = new ChunkIndex(dir);
    await index.refresh();
    const dropped = before.filter((s) => !index.get(s.name)).length;
    if (dropped > 0) log.info({ dropped }, 'manifest lines of missing chunks dropped');
    await writeManifest(dir, index.all(), config.MANIFEST_ENTRIES).catch((err: Error) => log.warn(`recent_manifest.jsonl not written: ${err.message}`));

    const writer = new ChunkWriter({ dir, chunkSeconds: config.CHUNK_SECONDS, nextSeq: index.nextSeq(), maxQueuedBytes: config.RECORDER_MAX_QUEUED_BYTES });
    const housekeeping = new SerialQueue();
    const pipeline = ctx.services.optional(DetectionPipelineToken);
    let storage: StorageState | null = null;
    let storageError: string | null = null;
    let lastDetectionAtMs: number | null = null;
    /** Chunks left by the last automatic prune that could not bring the volume out of CRITICAL (null once it is out). */
    let prunedToChunks: number | null = null;
    let stopping = false;

    const isWriting = () => writer.lastWriteAtMs !== null && Date.now() - writer.lastWriteAtMs < config.RECORDING_STALL_MS;
    const justifiedOk = () =>
      pipeline !== undefined && lastDetectionAtMs !== null && Date.now() - lastDetectionAtMs < Math.max(config.RECORDING_STALL_MS, config.CHUNK_SECONDS * 2000);
    const lastError = (): RecorderStatusFile['last_error'] => {
      const errors = [writer.lastError, video.lastExit(), storageError ? { at: new Date().toISOString(), message: storageError } : null];
      return errors.filter((e) => e !== null).sort((a, b) => Date.parse(b.at) - Date.parse(a.at))[0] ?? null;
    };

    const statusFile = (): RecorderStatusFile => {
      const stats = video.stats();
      const newest = index.newest();
      return {
        version: 1,
        updated_at: new Date().toISOString(),
        recordings_dir: dir,
        storage: storage ?? (storageError ? { health: 'CRITICAL', free_gb: 0, total_gb: 0, used_pct: 100, error: storageError } : null),
        encode: {
          codec: video.codec,
          width: video.width,
          height: video.height,
          fps: video.fps,
          gop: video.gop,
          running: video.running,
          frames: stats.frames,
          dropped: stats.dropped,
          bitrate_kbps: stats.bitrate_kbps,
          encode_fps: stats.encode_fps,
          last_exit: video.lastExit(),
        },
        write_queue: writer.writeQueue(),
        pruned_to_chunks_still_critical: prunedToChunks,
        is_writing: !stopping && isWriting(),
        last_write_at: writer.lastWriteAtMs === null ? null : new Date(writer.lastWriteAtMs).toISOString(),
        writing_chunk: writer.inProgress()?.name ?? null,
        total_chunks: index.size,
        latest_chunk: newest?.name ?? null,
        justified_chunks: index.all().filter((c) => c.justified).length,
        justified_ok: justifiedOk(),
        last_error: lastError(),
      };
    };
    const writeStatus = () =>
      housekeeping.run(async () => {
        try {
          await writeStatusFile(dir, statusFile());
        } catch (err) {
          log.warn({ code: toLookoutError(err).code }, `.h265_status not written: ${(err as Error).message}`);
        }
      });

    let requestWindow = { startMs: 0, count: 0 };
    const publishManifest = async (reason: string, command: DataManifestCommand = {}): Promise<void> => {
      if (!ctx.bus.connected) return;
      const chunks = index
        .all()
        .slice(-(command.limit ?? config.DATA_MANIFEST_CHUNKS))
        .reverse();
      try {
        await ctx.bus.publish('data_manifest', {
          timestamp: new Date().toISOString(),
          chunks,
          total_chunks: index.size,
          reason,
          ...(command.request_id ? { request_id: command.request_id } : {}),
        });
      } catch (err) {
        log.warn({ code: toLookoutError(err).code }, `data_manifest not published: ${(err as Error).message}`);
      }
    };

    const measure = async (): Promise<StorageState | null> => {
      try {
        storage = await measureStorage(dir, thresholds);
        storageError = null;
      } catch (err) {
        storage = null;
        storageError = (err as Error).message;
      }
      return storage;
    };
    let lastHealth: string | undefined;
    const checkStorage = () =>
      housekeeping.run(async () => {
        await index.refresh().catch(() => undefined); // follows a prune or a removal from outside
        const s = await measure();
        if (s?.health === 'CRITICAL' && config.AUTO_PRUNE) {
          try {
            const pruned = await pruneUntilHealthy(dir, config.KEEP_CHUNKS, async () => ({
              critical: (await measure())?.health === 'CRITICAL',
              freeBytes: await freeBytes(dir),
            }));
            await index.refresh();
            prunedToChunks = pruned.still_critical ? index.size : null;
            await writeManifest(dir, index.all(), config.MANIFEST_ENTRIES);
            log.warn(
              { removed: pruned.removed.length, freed_bytes: pruned.freed_bytes, storage_health: storage?.health, used_pct: storage?.used_pct },
              pruned.still_critical
                ? `storage CRITICAL after pruning to ${index.size} chunks: the recordings are not what fills the disk`
                : 'storage CRITICAL: pruned recordings',
            );
          } catch (err) {
            log.error({ code: toLookoutError(err).code }, `prune at CRITICAL failed: ${(err as Error).message}`);
          }
        }
        if (storage?.health !== 'CRITICAL') prunedToChunks = null;
        const health = storage?.health ?? 'unmeasured';
        if (health !== lastHealth) {
          lastHealth = health;
          if (health === 'OK' || health === 'WARNING') ctx.health.set('ok');
          else
            ctx.health.set(
              'degraded',
              storage ? `storage ${health}: ${storage.used_pct}% of ${dir} used` : `storage of ${dir} cannot be measured: ${storageError}`,
            );
        }
      });

    const completed = async (c: CompletedChunk): Promise<void> => {
      const sidecar: ChunkSidecar = buildSidecar({ dir, ...c }, gates);
      await housekeeping.run(async () => {
        try {
          await writeSidecar(dir, sidecar);
          index.add(sidecar);
          await writeManifest(dir, index.all(), config.MANIFEST_ENTRIES);
        } catch (err) {
          // The chunk plays; recovery at the next start rebuilds the sidecar from the stream.
          log.warn({ chunk: c.name }, `sidecar or manifest not written: ${(err as Error).message}`);
        }
      });
      log.debug({ chunk: c.name, frames: c.frames, justified: sidecar.justified }, 'chunk complete');
      await writeStatus();
      await publishManifest('chunk');
      await checkStorage();
    };
    const afterWrite = (p: Promise<CompletedChunk | null>) =>
      void p.then((c) => (c ? completed(c) : undefined)).catch((err: unknown) => log.error({ err }, 'chunk completion failed'));

    const offPictures = video.subscribe((picture) => afterWrite(writer.write(picture, { fps: video.fps, width: video.width, height: video.height })));
    const offExit = video.onExit((exit) => {
      log.warn({ at: exit.at }, `encoder exited (${exit.message}): the chunk in progress is completed`);
      afterWrite(writer.finish());
      void writeStatus();
    });
    const offDets = pipeline?.onResult((dets, frame) => {
      lastDetectionAtMs = Date.now();
      writer.logDetections(detsLine(frame.timestampMs > 1e12 ? frame.timestampMs : Date.now(), dets));
    });

    let connects = 0;
    ctx.bus.onConnect(() => void publishManifest(connects++ === 0 ? 'boot' : 'reconnect'));
    await ctx.bus.subscribe('cmd/data_manifest', (_topic, payload, meta) => {
      if (meta.retain) return; // a retained command would run again at every resubscribe
      const now = Date.now();
      if (now - requestWindow.startMs >= 1000) requestWindow = { startMs: now, count: 0 };
      if (++requestWindow.count > MANIFEST_REQUESTS_PER_S) return;
      let body: unknown;
      try {
        body = JSON.parse(payload.toString('utf8'));
      } catch {
        log.warn('cmd/data_manifest ignored: payload is not JSON');
        return;
      }
      const parsed = DataManifestCommandSchema.safeParse(body);
      if (!parsed.success) {
        log.warn(`cmd/data_manifest ignored: ${z.prettifyError(parsed.error)}`);
        return;
      }
      void publishManifest('request', parsed.data);
    });

    const understandDeps = {
      dir,
      index,
      inProgress: () => writer.inProgress(),
      personGate: gate,
      describer: config.VIDEO_DESCRIBER_URL
        ? {
            url: config.VIDEO_DESCRIBER_URL,
            model: config.VIDEO_DESCRIBER_MODEL,
            timeoutMs: config.VIDEO_DESCRIBER_TIMEOUT_MS,
            ...(config.VIDEO_DESCRIBER_API_KEY ? { apiKey: config.VIDEO_DESCRIBER_API_KEY } : {}),
          }
        : undefined,
      jpegTimeoutMs: 10_000,
    };
    ctx.tools.register('get_recording_status', async () => {
      const s = await measure();
      const newest = index.newest();
      const encoderExit = video.lastExit();
      return {
        total_chunks: index.size,
        inventory_count: Math.min(index.size, config.MANIFEST_ENTRIES),
        storage_health: s?.health ?? 'CRITICAL',
        storage_free_gb: s?.free_gb ?? 0,
        storage_used_pct: s?.used_pct ?? 100,
        latest_chunk: newest ? { name: newest.name, path: newest.path, started_at: newest.started_at, size_bytes: newest.size_bytes } : null,
        is_writing_data: isWriting(),
        recommendation: recommendation({
          isWriting: isWriting(),
          lastWriteAtMs: writer.lastWriteAtMs,
          startedAtMs,
          nowMs: Date.now(),
          stallMs: config.RECORDING_STALL_MS,
          encoderRunning: video.running,
          encoderExit,
          writeError: writer.lastError,
          storage: s,
          storageError,
          writeQueue: writer.writeQueue(),
          prunedToChunks: s?.health === 'CRITICAL' ? prunedToChunks : null,
        }),
        recordings_dir: dir,
        writing_chunk: writer.inProgress()?.name ?? null,
        justified_chunks: index.all().filter((c) => c.justified).length,
        justified_ok: justifiedOk(),
        dropped_pictures: writer.picturesDropped,
        write_queue: writer.writeQueue(),
        encoder: { running: video.running, ...video.stats(), last_exit: encoderExit },
        last_error: lastError(),
      };
    });
    ctx.tools.register('list_recording_chunks', async (args: z.output<typeof ListRecordingChunksArgsSchema>) => {
      const matching = [...index.all()].reverse().filter((c) => args.justified === undefined || c.justified === args.justified);
      const page = matching.slice(args.offset, args.offset + args.limit);
      const next = args.offset + page.length;
      return { chunks: page, total_count: matching.length, next_offset: next < matching.length ? next : null, source: 'device' as const };
    });
    ctx.tools.register('video_understand', async (args: z.output<typeof VideoUnderstandArgsSchema>, { signal }) =>
      videoUnderstand(args, understandDeps, signal),
    );

    await checkStorage();
    await writeStatus();
    clock.setInterval(() => void writeStatus(), config.STATUS_INTERVAL_MS);
    clock.setInterval(() => void checkStorage(), config.STORAGE_CHECK_MS);
    log.info({ dir, chunk_seconds: config.CHUNK_SECONDS, chunks: index.size, detector: pipeline !== undefined }, 'recording');

    ctx.onStop(async () => {
      stopping = true;
      offPictures();
      offExit();
      offDets?.();
      const last = await writer.finish();
      if (last) {
        const sidecar = buildSidecar({ dir, ...last }, gates);
        await housekeeping.run(async () => {
          await writeSidecar(dir, sidecar);
          index.add(sidecar);
          await writeManifest(dir, index.all(), config.MANIFEST_ENTRIES);
        });
      }
      await writeStatus();
      await housekeeping.idle();
    });
  },
});
