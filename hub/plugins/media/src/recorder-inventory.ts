import { z } from 'zod';
import { LookoutError, toLookoutError } from 'lookout/core';
import { RecordingStatusResultSchema } from 'lookout/core/contracts';
import { mapBounded } from 'lookout/lib/limits';
import type { RegisteredDevice } from '../../registry/src/service.js';
import { isChunk } from './chunk-discovery.js';
import type { Media } from './media.js';
import { cachedStorage, recordingStatusFallback } from './tool-fallbacks.js';

export const InventoryQuery = z.object({
  shadow: z.string().min(1).max(128).optional().describe('role label (or device id): only its devices'),
});

const InventoryDevice = z.object({
  device_id: z.string(),
  online: z.boolean(),
  source: z.enum(['device', 'ssh_sftp', 'ssh_listing', 'cache']).describe('who answered: get_recording_status, an SSH discovery, or only the cache'),
  chunk_count: z.number().int().nullable(),
  newest_chunk: z.looseObject({}).nullable(),
  storage_health: z.string().nullable(),
  storage_free_gb: z.number().nullable(),
  storage_used_pct: z.number().nullable(),
  is_writing_data: z.boolean().nullable(),
  recommendation: z.string().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable().describe('why the device itself did not answer'),
});
type InventoryDevice = z.output<typeof InventoryDevice>;

export const InventoryResponse = z.object({
  devices: z.array(InventoryDevice),
  totals: z.object({
    device_count: z.number().int(),
    chunk_count: z.number().int(),
    writing: z.number().int(),
    storage_health: z.record(z.string(), z.number().int()),
  }),
  generated_at: z.string(),
});

/**
 * `GET /fleet/recorder-inventory`: chunks and storage across the fleet. Per device, what the cache
 * holds (data_manifest, health message), completed by get_recording_status where the tool server
 * answers (else an SSH discovery when SSH is configured); a few devices at a time.
 */
export async function recorderInventory(
  media: Media,
  query: z.output<typeof InventoryQuery>,
  signal: AbortSignal,
): Promise<z.output<typeof InventoryResponse>> {
  const devices = media.devicesOf(query.shadow);
  const list = await mapBounded(devices, media.deps.discoveryConcurrency, (d) => inventoryOf(media, d, signal));
  const storage: Record<string, number> = { OK: 0, WARNING: 0, CRITICAL: 0, unknown: 0 };
  for (const d of list) storage[d.storage_health ?? 'unknown'] = (storage[d.storage_health ?? 'unknown'] ?? 0) + 1;
  return {
    devices: list,
    totals: {
      device_count: list.length,
      chunk_count: list.reduce((n, d) => n + (d.chunk_count ?? 0), 0),
      writing: list.filter((d) => d.is_writing_data === true).length,
      storage_health: storage,
    },
    generated_at: new Date().toISOString(),
  };
}

async function inventoryOf(media: Media, device: RegisteredDevice, signal: AbortSignal): Promise<InventoryDevice> {
  const { cache, tools, stepTimeoutMs } = media.deps;
  const id = device.deviceId;
  const chunks = (cache.device(id)?.recentChunks ?? []).filter(isChunk);
  const storage = cachedStorage(media, id);
  const healthCount = cache.view(id)?.health?.storage;
  const base: InventoryDevice = {
    device_id: id,
    online: cache.isOnline(id),
    source: 'cache',
    chunk_count: chunkCountOf(healthCount) ?? (chunks.length > 0 ? chunks.length : null),
    newest_chunk: chunks[0] ?? null,
    storage_health: storage?.storage_health ?? null,
    storage_free_gb: storage?.storage_free_gb ?? null,
    storage_used_pct: storage?.storage_used_pct ?? null,
    is_writing_data: null,
    recommendation: null,
    error: null,
  };
  const stepSignal = AbortSignal.any([signal, AbortSignal.timeout(stepTimeoutMs)]);
  let status: Record<string, unknown>;
  let source: InventoryDevice['source'] = 'device';
  try {
    if (device.toolUrl === null) throw new LookoutError('target_not_allowed', `no tool server to call: ${device.unreachableReason ?? 'not reachable'}`);
    const outcome = await tools.call(device, 'get_recording_status', {}, stepSignal);
    if (outcome.status === 'error') return { ...base, error: { code: outcome.code ?? 'tool_failed', message: outcome.error } };
    status = outcome.result as Record<string, unknown>;
  } catch (err) {
    const e = toLookoutError(err);
    const ssh = media.deps.ssh();
    if (signal.aborted || !ssh?.configured) return { ...base, error: { code: e.code, message: e.message } };
    try {
      status = await recordingStatusFallback(media, device, stepSignal, e.message);
      source = status.source === 'ssh_listing' ? 'ssh_listing' : 'ssh_sftp';
    } catch (sshErr) {
      const s = toLookoutError(sshErr);
      return { ...base, error: { code: e.code, message: `${e.message}; over SSH: ${s.message}` } };
    }
  }
  const parsed = RecordingStatusResultSchema.safeParse(status);
  if (!parsed.success)
    return { ...base, error: { code: 'tool_failed', message: `get_recording_status answered another shape: ${parsed.error.issues[0]?.message ?? ''}` } };
  const s = parsed.data;
  const unmeasured = new Set(Array.isArray(s.storage_unmeasured) ? (s.storage_unmeasured as unknown[]) : []);
  if (source === 'device') {
    media.recorder.learn(id, {
      is_writing_data: s.is_writing_data,
      storage_health: s.storage_health,
      total_chunks: s.total_chunks,
      source,
      recommendation: s.recommendation,
    });
  }
  return {
    ...base,
    source,
    chunk_count: s.total_chunks,
    newest_chunk: s.latest_chunk ?? base.newest_chunk,
    // Fields an SSH status could not measure are placeholders there: unknown here.
    storage_health: unmeasured.has('storage_health') ? null : s.storage_health,
    storage_free_gb: unmeasured.has('storage_free_gb') ? null : s.storage_free_gb,
    storage_used_pct: unmeasured.has('storage_used_pct') ? null : s.storage_used_pct,
    is_writing_data: s.is_writing_data,
    recommendation: s.recommendation,
  };
}

function chunkCountOf(storage: unknown): number | null {
  const n = typeof storage === 'object' && storage !== null ? (storage as Record<string, unknown>).chunk_count : undefined;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null;
}
