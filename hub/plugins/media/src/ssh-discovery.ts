import {
  CHUNK_NAME_PATTERN,
  ChunkSidecarSchema,
  ListRecordingChunksArgsSchema,
  sidecarNameOf,
  type ListRecordingChunksResult,
  type RecordingStatusResult,
} from 'lookout/core/contracts';
import { LookoutError } from 'lookout/core';
import { mapBounded } from 'lookout/lib/limits';
import type { RemoteFile, RemoteListing } from '../../device-ssh/src/service.js';
import type { RecordingsAccess } from './recordings-access.js';

/** A sidecar is a few hundred bytes; anything much larger is not one. */
const MAX_SIDECAR_BYTES = 64 * 1024;
/** With a justified filter every sidecar must be read: at most this many newest chunks are looked at. */
const MAX_FILTERED_SCAN = 500;
/** The recorder's status file (`.h265_status`). */
export const STATUS_FILE = '.h265_status';
/** A chunk closed longer ago than three chunk lengths means the recorder stopped (as /fleet/health judges). */
const CHUNKS_OF_GRACE = 3;
/** The grace when the chunk length is not known (no sidecar, one chunk): three 60 s chunks. */
const WRITING_GRACE_MS = 180_000;
/** Never less: the mtime is the device's clock, `now` the hub's, and a listing takes its time. */
const MIN_WRITING_GRACE_MS = 30_000;
/** Storage fields of get_recording_status; those SSH could not measure are named in `storage_unmeasured`. */
export type StorageField = 'storage_health' | 'storage_free_gb' | 'storage_used_pct';

export type ListingSource = 'ssh_sftp' | 'ssh_listing';

export const sourceOfListing = (via: RemoteListing): ListingSource => (via === 'sftp' ? 'ssh_sftp' : 'ssh_listing');

/** The complete chunks of a listing, newest first (names begin with their UTC start, then a sequence number). */
export function chunksOf(files: readonly RemoteFile[]): RemoteFile[] {
  return files.filter((f) => CHUNK_NAME_PATTERN.test(f.name)).sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
}

/**
 * `list_recording_chunks` answered from the recordings root over SSH: the listing gives the chunks
 * (newest first) and their sizes, each sidecar read over SSH gives the rest. A chunk whose sidecar
 * is missing or unreadable is listed with its name and size only (justified unknown: it does not
 * match a justified filter).
 */
export async function listChunksOverSsh(
  access: RecordingsAccess,
  deviceId: string,
  via: RemoteListing,
  rawArgs: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ListRecordingChunksResult & { files: RemoteFile[] }> {
  const parsed = ListRecordingChunksArgsSchema.safeParse(rawArgs);
  if (!parsed.success) throw new LookoutError('bad_request', `list_recording_chunks arguments: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const args = parsed.data;
  const files = await access.list(deviceId, via, signal);
  const all = chunksOf(files);
  const withSidecars = new Set(files.filter((f) => f.name.endsWith('.json')).map((f) => f.name));
  const describe = (chunks: RemoteFile[]) =>
    mapBounded(chunks, 4, async (f): Promise<Record<string, unknown>> => ({
      ...(await sidecarOf(access, deviceId, f.name, withSidecars, signal)),
      name: f.name,
      size_bytes: f.size,
    }));
  let page: Record<string, unknown>[];
  let total: number;
  if (args.justified === undefined) {
    total = all.length;
    page = await describe(all.slice(args.offset, args.offset + args.limit));
  } else {
    const described = await describe(all.slice(0, MAX_FILTERED_SCAN));
    const matching = described.filter((c) => c.justified === args.justified);
    total = matching.length;
    page = matching.slice(args.offset, args.offset + args.limit);
  }
  const next = args.offset + page.length < total ? args.offset + page.length : null;
  return { chunks: page as ListRecordingChunksResult['chunks'], total_count: total, next_offset: next, source: sourceOfListing(via), files };
}

async function sidecarOf(
  access: RecordingsAccess,
  deviceId: string,
  chunk: string,
  present: Set<string>,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const name = sidecarNameOf(chunk);
  if (!present.has(name)) return {};
  try {
    const raw: unknown = JSON.parse((await access.read(deviceId, name, MAX_SIDECAR_BYTES, signal)).toString('utf8'));
    const s = ChunkSidecarSchema.safeParse(raw);
    // The listing's name and size are what is on disk; a sidecar naming another chunk is not this one's.
    return s.success && s.data.name === chunk ? s.data : {};
  } catch {
    return {};
  }
}

/** Facts of a recorder status file (or of the hub's cache) that a status answer needs. */
export interface StorageFacts {
  storage_health?: 'OK' | 'WARNING' | 'CRITICAL';
  storage_free_gb?: number;
  storage_used_pct?: number;
  /** Where these facts came from, for the recommendation. */
  from: string;
}

/** What an SSH status adds to the tool's shape: which storage fields are placeholders. */
export interface SshStatusExtras {
  source: ListingSource;
  /** False when any storage field could not be measured over SSH: its value is a placeholder, not a reading. */
  storage_known: boolean;
  storage_unmeasured: StorageField[];
}

/**
 * `get_recording_status` from an SSH discovery: counts, latest chunk and whether it writes from
 * the listing, storage from the recorder's status file or the device's last health message.
 *
 * Listings leave dotfiles out, so the chunk in progress (`.<name>.part`) is never seen: the
 * recorder writes while its newest complete chunk was closed less than three chunk lengths ago
 * (the length from that chunk's sidecar, else from the start times of the two newest; at least 30 s
 * for clock skew, 180 s when the length is unknown).
 *
 * The tool's shape requires every storage field. One SSH could not measure is given a placeholder
 * (health WARNING: someone should look; 0 for the numbers), `storage_known` is false,
 * `storage_unmeasured` names the fields and the recommendation says so.
 */
export async function recordingStatusOverSsh(
  access: RecordingsAccess,
  deviceId: string,
  via: RemoteListing,
  signal: AbortSignal,
  cached: StorageFacts | undefined,
  cause: string,
  now = Date.now(),
): Promise<RecordingStatusResult & SshStatusExtras> {
  const files = await access.list(deviceId, via, signal);
  const chunks = chunksOf(files);
  const newest = chunks[0];
  const storage = (await statusFileFacts(access, deviceId, files, signal)) ?? cached;
  const lastWrite = newest?.mtimeMs ?? 0;
  const chunkMs = newest ? await chunkLengthMs(access, deviceId, chunks, files, signal) : undefined;
  const graceMs = chunkMs !== undefined ? Math.max(MIN_WRITING_GRACE_MS, CHUNKS_OF_GRACE * chunkMs) : WRITING_GRACE_MS;
  const writing = lastWrite > 0 && now - lastWrite <= graceMs;
  const unmeasured = (['storage_health', 'storage_free_gb', 'storage_used_pct'] as const).filter((f) => storage?.[f] === undefined);
  const health = storage?.storage_health ?? 'WARNING';
  const advice: string[] = [`discovered over SSH (${sourceOfListing(via)}) because the tool server did not answer: ${cause}`];
  if (!storage)
    advice.push(
      'storage could not be measured over SSH (no recorder status file, no health message): storage_health, storage_free_gb and storage_used_pct are placeholders; check the device',
    );
  else {
    if (storage.from !== 'status file') advice.push(`storage from ${storage.from}`);
    if (unmeasured.length > 0) advice.push(`${unmeasured.join(', ')} could not be measured over SSH (placeholder values)`);
  }
  if (!newest) advice.push('no recording chunk on the device');
  else if (!writing)
    advice.push(`recording stalled since ${new Date(lastWrite).toISOString()}: no chunk completed within ${Math.round(graceMs / 1000)} s; check the recorder`);
  if (storage?.storage_health === 'CRITICAL') advice.push('storage CRITICAL: prune or replace the disk');
  return {
    total_chunks: chunks.length,
    inventory_count: chunks.length,
    storage_health: health,
    storage_free_gb: storage?.storage_free_gb ?? 0,
    storage_used_pct: storage?.storage_used_pct ?? 0,
    storage_known: unmeasured.length === 0,
    storage_unmeasured: unmeasured,
    latest_chunk: newest ? { name: newest.name, size_bytes: newest.size, ...startOf(newest.name) } : null,
    is_writing_data: writing,
    recommendation: advice.join('; '),
    source: sourceOfListing(via),
  };
}

/** How long a chunk runs: the newest's sidecar duration, else the gap between the two newest starts. */
async function chunkLengthMs(
  access: RecordingsAccess,
  deviceId: string,
  chunks: RemoteFile[],
  files: RemoteFile[],
  signal: AbortSignal,
): Promise<number | undefined> {
  const newest = chunks[0];
  if (!newest) return undefined;
  const present = new Set(files.filter((f) => f.name.endsWith('.json')).map((f) => f.name));
  const sidecar = await sidecarOf(access, deviceId, newest.name, present, signal);
  const duration = sidecar.duration_s;
  if (typeof duration === 'number' && Number.isFinite(duration) && duration > 0) return duration * 1000;
  const a = startOf(newest.name).started_at;
  const b = chunks[1] ? startOf(chunks[1].name).started_at : undefined;
  if (a === undefined || b === undefined) return undefined;
  const gap = Date.parse(a) - Date.parse(b);
  return gap > 0 ? gap : undefined;
}

/** The recorder's `.h265_status` (its `storage` object), when present and readable. */
async function statusFileFacts(access: RecordingsAccess, deviceId: string, files: RemoteFile[], signal: AbortSignal): Promise<StorageFacts | undefined> {
  if (!files.some((f) => f.name === STATUS_FILE)) return undefined;
  try {
    const raw = JSON.parse((await access.read(deviceId, STATUS_FILE, MAX_SIDECAR_BYTES, signal)).toString('utf8')) as Record<string, unknown>;
    return storageFacts(raw.storage, 'status file') ?? storageFacts(raw, 'status file');
  } catch {
    return undefined;
  }
}

/** Storage fields as the recorder and health messages spell them (health or storage_health, free_gb, used_pct). */
export function storageFacts(value: unknown, from: string): StorageFacts | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const health = [v.storage_health, v.health, v.state].find((h): h is 'OK' | 'WARNING' | 'CRITICAL' => h === 'OK' || h === 'WARNING' || h === 'CRITICAL');
  const num = (...xs: unknown[]) => xs.find((x): x is number => typeof x === 'number' && Number.isFinite(x));
  const free = num(v.storage_free_gb, v.free_gb);
  const used = num(v.storage_used_pct, v.used_pct);
  if (health === undefined && free === undefined && used === undefined) return undefined;
  return {
    from,
    ...(health !== undefined ? { storage_health: health } : {}),
    ...(free !== undefined ? { storage_free_gb: Math.max(0, free) } : {}),
    ...(used !== undefined ? { storage_used_pct: Math.min(100, Math.max(0, used)) } : {}),
  };
}

/** `20250101T120000123Z_000001.h265` → its start time. */
export function startOf(name: string): { started_at?: string } {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z/.exec(name);
  if (!m) return {};
  const iso = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`;
  return Number.isFinite(Date.parse(iso)) ? { started_at: iso } : {};
}
