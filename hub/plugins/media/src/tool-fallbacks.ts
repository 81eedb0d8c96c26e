import { LookoutError, toLookoutError } from 'lookout/core';
import type { RemoteListing } from '../../device-ssh/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { Media } from './media.js';
import { listChunksOverSsh, recordingStatusOverSsh, storageFacts, type StorageFacts } from './ssh-discovery.js';

const VIAS: RemoteListing[] = ['sftp', 'shell'];

/**
 * tools/call fallbacks: when a device's tool server is unreachable, `list_recording_chunks` and
 * `get_recording_status` are answered from an SSH discovery (SFTP listing, else a shell listing;
 * sidecars read over SSH), in the tool's own result shape with `source` ssh_sftp / ssh_listing.
 */
export function registerToolFallbacks(media: Media): (() => void)[] {
  const { tools } = media.deps;
  return [
    tools.addFallback('list_recording_chunks', (device, args, signal) =>
      overSsh(media, device, async (ssh, via) => {
        const { files: _files, ...result } = await listChunksOverSsh(ssh, device.deviceId, via, args, signal);
        return result;
      }),
    ),
    tools.addFallback('get_recording_status', (device, _args, signal, cause) => recordingStatusFallback(media, device, signal, cause.message)),
  ];
}

/** get_recording_status over SSH (also what the recorder inventory uses when the tool server is down). */
export async function recordingStatusFallback(media: Media, device: RegisteredDevice, signal: AbortSignal, cause: string): Promise<Record<string, unknown>> {
  const status = await overSsh(media, device, (ssh, via) =>
    recordingStatusOverSsh(ssh, device.deviceId, via, signal, cachedStorage(media, device.deviceId), cause),
  );
  media.recorder.learn(device.deviceId, {
    is_writing_data: status.is_writing_data,
    // A placeholder is not a reading: the recorder's storage stays unknown.
    storage_health: status.storage_unmeasured.includes('storage_health') ? null : status.storage_health,
    total_chunks: status.total_chunks,
    source: status.source,
    recommendation: status.recommendation,
  });
  return status;
}

/** Runs `fn` over SFTP, else over a shell listing; both failing rejects with what each said. */
async function overSsh<T>(
  media: Media,
  device: RegisteredDevice,
  fn: (ssh: NonNullable<ReturnType<Media['deps']['ssh']>>, via: RemoteListing) => Promise<T>,
): Promise<T> {
  const ssh = media.deps.ssh();
  if (!ssh) throw new LookoutError('ssh_not_configured', 'the hub runs no device-ssh plugin');
  if (!ssh.configured) throw new LookoutError('ssh_not_configured', 'no SSH credentials are configured for devices (DEVICE_PASSWORD or a key file)');
  const failures: string[] = [];
  let last: LookoutError | undefined;
  for (const via of VIAS) {
    try {
      return await fn(ssh, via);
    } catch (err) {
      last = toLookoutError(err);
      if (last.code === 'bad_request') throw last;
      failures.push(`${via}: ${last.message}`);
      media.deps.ring.record({
        kind: 'recording_fail',
        device_id: device.deviceId,
        message: `SSH discovery (${via}): ${last.code}: ${last.message}`.slice(0, 300),
        details: { step: via === 'sftp' ? 'ssh_sftp' : 'ssh_listing', code: last.code },
      });
    }
  }
  throw new LookoutError(last?.code ?? 'ssh_failed', `SSH discovery failed: ${failures.join('; ')}`, { details: { attempts: failures } });
}

/** Storage as the device's last health message said it, for a status SSH cannot measure. */
export function cachedStorage(media: Media, deviceId: string): StorageFacts | undefined {
  const health = media.deps.cache.view(deviceId)?.health;
  if (!health) return undefined;
  const facts = storageFacts(
    { ...(typeof health.storage === 'object' && health.storage !== null ? health.storage : {}), storage_health: health.storage_health },
    'its last health message',
  );
  return facts;
}
