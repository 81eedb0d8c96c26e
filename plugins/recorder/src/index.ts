import { mkdir } from 'node:fs/promises';
import { SerialQueue } from 'lookout/lib/limits';
import { recordingsRoot, definePlugin, deviceInfo } from 'lookout/core';
import { busTopic } from 'lookout/core/contracts';
import { RecordingFilesToken } from 'lookout/lib/storage';
import { EncodedVideoToken } from '../../encode/src/service.js';
import { DetectionPipelineToken } from '../../detector/src/service.js';
import { ChunkCompletion } from './chunk-completion.js';
import { ChunkWriter } from './chunk-writer.js';
import { RecorderConfigSchema } from './config.js';
import { ManifestPublisher } from './manifest-publisher.js';
import { openRecordings } from './open-recordings.js';
import { RecorderActivity } from './recorder-activity.js';
import { describerOf, RECORDER_TOOLS, registerRecorderTools } from './recorder-tools.js';
import { recordingStatus } from './recording-status.js';
import { RecordingStatusToken } from './service.js';
import { statusFileWriter } from './status-file.js';
import { StorageHealthReport } from './storage-health.js';
import { StorageWatch } from './storage-watch.js';
import { pruneLogEntry } from './prune-log.js';

/**
 * The device recorder (layer 0: every layer records). It writes the encoder's one H.265 stream as
 * chunks of about CHUNK_SECONDS with a sidecar and a detection log each, keeps `.h265_status` and
 * `recent_manifest.jsonl`, repairs the folder after a crash, prunes at CRITICAL storage, publishes
 * `data_manifest` (on connect, on `cmd/data_manifest`, after each chunk) and answers the recording tools.
 * `start()` only wires the parts, each in its own file: the folder's repair (open-recordings), the
 * recording (chunk-completion), storage and retention (storage-watch) with the plugin's health
 * (storage-health), the status file (status-file), data_manifest (manifest-publisher) and the tools
 * (recorder-tools).
 */
export default definePlugin({
  name: 'recorder',
  version: '1.0.0',
  core: '^1',
  description: 'H.265 chunks with sidecars, .h265_status, recent_manifest.jsonl, data_manifest and the recording tools',
  layer: 'layer0',
  requires: [EncodedVideoToken],
  optionalRequires: [DetectionPipelineToken],
  provides: [RecordingFilesToken, RecordingStatusToken],
  config: RecorderConfigSchema,
  topics: [busTopic('data_manifest')],
  subscriptions: ['cmd/data_manifest'],
  startTimeoutMs: 120_000,
  tools: RECORDER_TOOLS,
  async start(ctx) {
    const { config, runtime, log, clock } = ctx;
    const video = ctx.services.get(EncodedVideoToken);
    const pipeline = ctx.services.optional(DetectionPipelineToken);
    const gates = { person: config.JUSTIFY_PERSON_CONFIDENCE, weapon: config.JUSTIFY_WEAPON_CONFIDENCE };
    const manifestEntries = config.MANIFEST_ENTRIES;
    const dir = recordingsRoot(runtime.dataDir, config.RECORDINGS_DIR);
    const startedAtMs = clock.now();
    await mkdir(dir, { recursive: true });
    // The tool server serves this folder's recording files read-only (GET /recordings/<file>): playback without SSH.
    ctx.services.provide(RecordingFilesToken, { root: dir });

    const index = await openRecordings({ dir, video, gates, manifestEntries, log });
    const writer = new ChunkWriter({ dir, chunkSeconds: config.CHUNK_SECONDS, nextSeq: index.nextSeq(), maxQueuedBytes: config.RECORDER_MAX_QUEUED_BYTES });
    const housekeeping = new SerialQueue();
    const thresholds = { warnPct: config.STORAGE_WARN_PCT, criticalPct: config.STORAGE_CRITICAL_PCT };
    const storage = new StorageWatch({
      ...{ dir, thresholds, autoPrune: config.AUTO_PRUNE, keepChunks: config.KEEP_CHUNKS, manifestEntries, index, log },
      // Each prune is told to the fleet on events/automation_log (the status plugin owns the topic).
      onPrune: (report, trigger) => deviceInfo(runtime).reportAutomation(pruneLogEntry(report, trigger)),
    });
    const stallMs = config.RECORDING_STALL_MS;
    const activity = new RecorderActivity({ writer, video, storage, hasDetector: pipeline !== undefined, stallMs, chunkSeconds: config.CHUNK_SECONDS });
    const health = new StorageHealthReport(ctx.health, dir);
    const manifest = new ManifestPublisher({ bus: ctx.bus, index, chunks: config.DATA_MANIFEST_CHUNKS, log });
    const writeStatus = statusFileWriter({ dir, video, writer, index, storage, activity }, housekeeping, log);
    const checkStorage = () =>
      housekeeping.run(async () => {
        await storage.check();
        health.update(storage.state, storage.error);
      });

    const recording = new ChunkCompletion({
      ...{ dir, video, pipeline, writer, index, activity, gates, manifestEntries, housekeeping, log },
      afterChunk: { writeStatus, publishManifest: () => manifest.publish('chunk'), checkStorage },
    });
    recording.start();
    await manifest.listen();
    const understand = { dir, index, inProgress: () => writer.inProgress(), personGate: gates.person, describer: describerOf(config), jpegTimeoutMs: 10_000 };
    const statusParts = { dir, video, writer, index, storage, activity, startedAtMs, manifestEntries, stallMs };
    // Through the housekeeping queue, as the watch's own checks, so that a prune never races one.
    registerRecorderTools(ctx.tools, statusParts, understand, () =>
      housekeeping.run(async () => {
        const report = await storage.pruneNow();
        health.update(storage.state, storage.error);
        return report;
      }),
    );
    ctx.services.provide(RecordingStatusToken, { status: () => recordingStatus(statusParts) });

    await checkStorage();
    await writeStatus();
    clock.setInterval(() => void writeStatus(), config.STATUS_INTERVAL_MS);
    clock.setInterval(() => void checkStorage(), config.STORAGE_CHECK_MS);
    log.info({ dir, chunk_seconds: config.CHUNK_SECONDS, chunks: index.size, detector: pipeline !== undefined }, 'recording');

    ctx.onStop(async () => {
      activity.stopping = true;
      await recording.stop();
      await writeStatus();
      await housekeeping.idle();
    });
  },
});
