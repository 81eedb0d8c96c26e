import { LookoutError } from 'lookout/core';
import { jpegFromHevc } from 'lookout/lib/media';
import { deviceSurfaceUrl, type RegisteredDevice } from '../../registry/src/service.js';
import type { LiveTails } from './live-tails.js';
import type { Snapshot, SnapshotRequest } from './snapshot-types.js';

export interface TailStepSettings {
  /** How long a cold tail may take to its first keyframe. */
  warmTimeoutMs: number;
  /** The newest picture of the tail must be this recent. */
  maxAgeMs: number;
  decodeTimeoutMs: number;
}

/**
 * Where a device's live stream is: its tool server's host (the address the registry already vetted
 * against the device networks), the `live` port its hello announced, https when its hello's `tls` names `live`.
 */
export function liveUrl(device: RegisteredDevice): string {
  const live = device.ports?.live;
  if (typeof live !== 'number') {
    throw new LookoutError('live_stream_unavailable', `${device.deviceId} announced no live port (its encoder is not running or it records nothing)`, {
      details: { device_id: device.deviceId },
    });
  }
  if (!device.toolUrl) {
    throw new LookoutError('live_stream_unavailable', `${device.deviceId} is not contacted: ${device.unreachableReason ?? 'no address'}`, {
      details: { device_id: device.deviceId },
    });
  }
  // The device's word that its live stream speaks TLS: read over https, its certificate pinned.
  return deviceSurfaceUrl(device, 'live', '/live.h265', { contactedOnly: true })!;
}

/** Step 2: the last picture of the hub's tail of the live stream, warmed on first use. */
export async function snapshotFromTail(tails: LiveTails, req: SnapshotRequest, settings: TailStepSettings): Promise<Snapshot> {
  const url = liveUrl(req.device);
  const tail = url.startsWith('https:')
    ? tails.get(req.device.deviceId, url, Date.now(), req.device.tlsFingerprint ?? null)
    : tails.get(req.device.deviceId, url);
  const cold = !tail.warm;
  let gop;
  try {
    // A recent picture (this connection's, or the last one's while it reconnects) serves at once.
    gop = tail.snapshot(settings.maxAgeMs);
  } catch {
    await tail.ready(settings.warmTimeoutMs, req.signal);
    gop = tail.snapshot(settings.maxAgeMs);
  }
  const jpeg = await jpegFromHevc(gop.stream, { width: req.width, quality: req.quality, timeoutMs: settings.decodeTimeoutMs, signal: req.signal });
  return { jpeg, source: 'live_tail', capturedAt: new Date(gop.lastPictureAt).toISOString(), tail: cold ? 'cold' : 'warm' };
}
