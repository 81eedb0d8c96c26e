import { CHUNK_NAME_PATTERN, ListRecordingChunksResultSchema } from 'lookout/core/contracts';
import { LookoutError, toLookoutError } from 'lookout/core';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { DeviceSsh, RemoteListing } from '../../device-ssh/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { DeviceTools } from '../../tools-proxy/src/service.js';
import type { LocalRecordings } from './recordings-access.js';
import { listChunksOverSsh } from './ssh-discovery.js';

/** A chunk as discovery found it: at least its file name; the sidecar fields when known. */
export type ChunkRecord = Record<string, unknown> & { name: string };

/** Where a device's chunks can be learned, in the order a route tries them. */
export type DiscoveryStep = 'data_manifest' | 'device' | 'ssh_sftp' | 'ssh_listing' | 'local';

export interface StepFailure {
  step: DiscoveryStep;
  code: string;
  message: string;
}

export interface Discovery {
  chunks: ChunkRecord[];
  /** The step that answered. */
  source: DiscoveryStep;
  total_count: number | null;
  /** Steps tried before it, and why each did not answer. */
  failures: StepFailure[];
}

export interface DiscoveryDeps {
  cache: BusCache;
  tools: DeviceTools;
  ssh: () => DeviceSsh | undefined;
  local: LocalRecordings | undefined;
  stepTimeoutMs: number;
  /** A step failed (the ring records it). */
  onFailure?: (deviceId: string, failure: StepFailure) => void;
}

export interface DiscoveryQuery {
  limit: number;
  justified?: boolean;
  signal: AbortSignal;
}

/**
 * A device's newest chunks from the first step that answers. A step answers when it could ask
 * (a data_manifest with chunks is in the cache, the tool server replied, SSH listed the root); an
 * empty answer from a step that could ask is an answer. When none answers: recordings_unavailable
 * with what each step said.
 */
export async function discoverChunks(deps: DiscoveryDeps, device: RegisteredDevice, steps: readonly DiscoveryStep[], q: DiscoveryQuery): Promise<Discovery> {
  const failures: StepFailure[] = [];
  for (const step of steps) {
    const signal = AbortSignal.any([q.signal, AbortSignal.timeout(deps.stepTimeoutMs)]);
    try {
      const found = await runStep(deps, device, step, q, signal);
      return { ...found, source: step, failures };
    } catch (err) {
      if (q.signal.aborted) throw toLookoutError(err);
      const e =
        signal.aborted && !(err instanceof LookoutError)
          ? new LookoutError('device_timeout', `${step}: no answer within ${deps.stepTimeoutMs} ms`)
          : toLookoutError(err);
      const failure = { step, code: e.code, message: e.message };
      failures.push(failure);
      deps.onFailure?.(device.deviceId, failure);
    }
  }
  throw new LookoutError(
    'recordings_unavailable',
    `${device.deviceId}: recordings could not be listed (${failures.map((f) => `${f.step}: ${f.message}`).join('; ')})`,
    {
      details: { device_id: device.deviceId, attempts: failures },
    },
  );
}

async function runStep(
  deps: DiscoveryDeps,
  device: RegisteredDevice,
  step: DiscoveryStep,
  q: DiscoveryQuery,
  signal: AbortSignal,
): Promise<{ chunks: ChunkRecord[]; total_count: number | null }> {
  const args = { limit: q.limit, ...(q.justified !== undefined ? { justified: q.justified } : {}) };
  switch (step) {
    case 'data_manifest': {
      const held = (deps.cache.device(device.deviceId)?.recentChunks ?? []).filter(isChunk);
      if (held.length === 0) throw new LookoutError('recording_not_found', 'no data_manifest with chunks in the cache');
      const matching = q.justified === undefined ? held : held.filter((c) => c.justified === q.justified);
      return { chunks: newestFirst(matching).slice(0, q.limit), total_count: matching.length };
    }
    case 'device': {
      if (device.toolUrl === null) throw new LookoutError('target_not_allowed', `no tool server to call: ${device.unreachableReason ?? 'not reachable'}`);
      const outcome = await deps.tools.call(device, 'list_recording_chunks', args, signal);
      if (outcome.status === 'error')
        throw new LookoutError('tool_failed', `list_recording_chunks failed: ${outcome.error}`, { details: { code: outcome.code } });
      const parsed = ListRecordingChunksResultSchema.safeParse(outcome.result);
      if (!parsed.success) throw new LookoutError('tool_failed', `list_recording_chunks answered another shape: ${parsed.error.issues[0]?.message ?? ''}`);
      return { chunks: parsed.data.chunks.filter(isChunk), total_count: parsed.data.total_count };
    }
    case 'ssh_sftp':
    case 'ssh_listing': {
      const ssh = deps.ssh();
      if (!ssh) throw new LookoutError('ssh_not_configured', 'the hub runs no device-ssh plugin');
      if (!ssh.configured) throw new LookoutError('ssh_not_configured', 'no SSH credentials are configured (DEVICE_PASSWORD or a key file)');
      return listed(await listChunksOverSsh(ssh, device.deviceId, viaOf(step), args, signal));
    }
    case 'local': {
      if (!deps.local) throw new LookoutError('recordings_unavailable', 'no local recordings folder configured (LOOKOUT_MEDIA_LOCAL_RECORDINGS)');
      return listed(await listChunksOverSsh(deps.local, device.deviceId, 'sftp', args, signal));
    }
  }
}

const viaOf = (step: 'ssh_sftp' | 'ssh_listing'): RemoteListing => (step === 'ssh_sftp' ? 'sftp' : 'shell');

function listed(r: { chunks: Record<string, unknown>[]; total_count: number }): { chunks: ChunkRecord[]; total_count: number } {
  return { chunks: r.chunks.filter(isChunk), total_count: r.total_count };
}

/** A device's entry that names a chunk file (anything else could not be served). */
export function isChunk(c: Record<string, unknown>): c is ChunkRecord {
  return typeof c.name === 'string' && c.name.length <= 128 && CHUNK_NAME_PATTERN.test(c.name);
}

function newestFirst(chunks: ChunkRecord[]): ChunkRecord[] {
  const key = (c: ChunkRecord) => (typeof c.started_at === 'string' ? c.started_at : '') + c.name;
  return [...chunks].sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0));
}
