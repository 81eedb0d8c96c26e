import { open, rename, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { deviceTlsRefusalOf } from 'lookout/lib/tls';
import { isRecordingFileName } from 'lookout/lib/storage';
import { LookoutError } from 'lookout/core';
import type { DeviceHttpsFetch } from './device-https-fetch.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { RecordingsAccess } from './recordings-access.js';

/** Past this a chunk is not a recording of this fleet (a 60 s chunk is a few MB): the download stops. */
export const MAX_CHUNK_BYTES = 1024 * 1024 * 1024;
/** Times a cut transfer is resumed from where it stopped (Range) before the device counts as failing. */
export const RESUMES = 3;

export interface DeviceHttpDeps {
  /** The registered device (undefined: not registered). */
  device: (deviceId: string) => RegisteredDevice | undefined;
  /** The device's tool token (derived from the fleet secret), or undefined to send none. */
  credential: (deviceId: string) => string | undefined;
  /** For a device whose tool server speaks TLS (an https tool URL): the fleet CA and its pinned certificate. Absent: https is refused. */
  https?: DeviceHttpsFetch;
}

export interface FetchIntoOptions {
  /** The device's ETag of what the partial file holds (absent: start from the beginning). */
  etag?: string | undefined;
  signal?: AbortSignal;
  /** Bytes in the partial file and the file's size, as they come. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  /** The device's ETag of the file, for a later resume. */
  onEtag?: (etag: string | undefined) => void;
}

/**
 * Recording files from the device itself, over its tool server's `GET /recordings/<file>` with the
 * device's tool token: what the hub plays from without SSH credentials. A download is written to
 * `<path>.part`, resumed with `Range` and `If-Range` (the device's ETag: a file replaced meanwhile
 * starts over) when the connection is cut, its size checked against the device's, then renamed; a
 * device busy with other transfers (429) is asked again after its Retry-After (at most 2 s).
 *
 * Failures: bad_request (a name), target_unknown, target_not_allowed (no tool server to reach),
 * recording_not_found (the device says it has no such file), device_auth_refused (401/403),
 * recordings_unavailable (no /recordings route, no recorder, anything else the device answered),
 * device_unreachable (the connection failed).
 */
export class DeviceHttpRecordings implements Pick<RecordingsAccess, 'read' | 'download'> {
  constructor(private readonly deps: DeviceHttpDeps) {}

  async read(deviceId: string, name: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
    const res = await this.request(deviceId, name, {}, signal);
    if (res.status !== 200) throw await this.failure(deviceId, name, res);
    if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
      await res.body?.cancel();
      throw new LookoutError('payload_too_large', `${name}: more than ${maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let seen = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      seen += chunk.length;
      if (seen > maxBytes) throw new LookoutError('payload_too_large', `${name}: more than ${maxBytes} bytes`);
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks);
  }

  async download(deviceId: string, name: string, localPath: string, signal?: AbortSignal): Promise<{ bytes: number }> {
    const tmp = `${localPath}.part`;
    try {
      const { bytes } = await this.fetchInto(deviceId, name, tmp, signal ? { signal } : {});
      await rename(tmp, localPath);
      return { bytes };
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /**
   * Brings the file into `part`, resuming from what `part` holds when `etag` is given (the device's
   * ETag of the file then: sent as If-Range, so a file replaced since starts over). Resumes a cut
   * connection up to RESUMES times itself; on failure `part` keeps what came, for a later attempt
   * (the transfer queue's). Resolves the file's size and the offset the first answer started from.
   */
  async fetchInto(deviceId: string, name: string, part: string, o: FetchIntoOptions = {}): Promise<{ bytes: number; resumedFrom: number }> {
    const { signal } = o;
    let etag = o.etag;
    let have = etag ? ((await stat(part).catch(() => undefined))?.size ?? 0) : 0;
    let resumedFrom: number | undefined;
    let total: number | undefined;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = have > 0 && etag ? { range: `bytes=${have}-`, 'if-range': etag } : {};
      const res = await this.request(deviceId, name, headers, signal);
      if (res.status === 429 && attempt < RESUMES) {
        // The device sends a few files at once (its slot may still be held by the transfer just cut): a moment, then again.
        await res.body?.cancel();
        await sleep(Math.min(Number(res.headers.get('retry-after')) || 1, 2) * 1000, undefined, signal ? { signal } : {});
        continue;
      }
      if (res.status === 200)
        have = 0; // the whole file (first try, or the file changed under If-Range)
      else if (res.status !== 206 || !headers.range) throw await this.failure(deviceId, name, res);
      resumedFrom ??= have;
      const size = res.status === 206 ? rangeTotal(res.headers.get('content-range'), have) : Number(res.headers.get('content-length'));
      if (!Number.isSafeInteger(size) || size < 0 || size > MAX_CHUNK_BYTES) {
        await res.body?.cancel();
        throw new LookoutError('recordings_unavailable', `${deviceId}/${name}: the device announced no usable size`);
      }
      total = size;
      etag = res.headers.get('etag') ?? undefined;
      o.onEtag?.(etag);
      const from = have;
      o.onProgress?.(from, size);
      const cut = await this.write(res, part, have === 0 ? 'w' : 'a', size - have, (n) => o.onProgress?.(from + n, size));
      have = (await stat(part)).size;
      if (!cut && have === total) break;
      if (signal?.aborted) throw signal.reason;
      if (attempt >= RESUMES || !etag) {
        throw new LookoutError('recordings_unavailable', `${deviceId}/${name}: the transfer stopped at ${have} of ${total} bytes ${attempt + 1} times`);
      }
    }
    return { bytes: have, resumedFrom: resumedFrom ?? 0 };
  }

  /**
   * Appends the answer's body, each piece written before the next is read (so that after a cut the
   * file holds exactly what came); resolves true when the connection was cut before `expected` bytes.
   */
  private async write(res: Response, tmp: string, flags: 'w' | 'a', expected: number, written?: (bytes: number) => void): Promise<boolean> {
    const file = await open(tmp, flags);
    let seen = 0;
    try {
      for await (const piece of (res.body ?? []) as AsyncIterable<Uint8Array>) {
        seen += piece.length;
        if (seen > expected) throw new LookoutError('recordings_unavailable', `the device sent more than the ${expected} bytes it announced`);
        await file.write(piece);
        written?.(seen);
      }
      return seen < expected;
    } catch (err) {
      if (err instanceof LookoutError || (err as Error).name === 'AbortError') throw err;
      return true; // cut: what came is on disk, the rest is asked for with a Range
    } finally {
      await file.close();
    }
  }

  private async request(deviceId: string, name: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    if (!isRecordingFileName(name)) throw new LookoutError('bad_request', `${JSON.stringify(name.slice(0, 160))} is not a recording file name`);
    const device = this.deps.device(deviceId);
    if (!device) throw new LookoutError('target_unknown', `no device ${deviceId} is registered`);
    if (device.toolUrl === null) throw new LookoutError('target_not_allowed', `no tool server to ask: ${device.unreachableReason ?? 'not reachable'}`);
    const url = new URL(`/recordings/${name}`, device.toolUrl);
    const token = this.deps.credential(deviceId);
    const sent = { ...headers, ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) };
    try {
      if (url.protocol === 'https:') {
        if (!this.deps.https) throw new LookoutError('device_unreachable', `${url.host}: the hub does not dial devices over TLS here`);
        return await this.deps.https.get(url, { deviceId, fingerprint: device.tlsFingerprint ?? null }, sent, signal);
      }
      return await fetch(url, { headers: sent, redirect: 'manual', ...(signal ? { signal } : {}) });
    } catch (err) {
      if (signal?.aborted || err instanceof LookoutError) throw err;
      const refusal = deviceTlsRefusalOf(err);
      if (refusal) {
        throw new LookoutError('device_tls_mismatch', `${url.host}: the certificate presented is refused for ${deviceId}: ${refusal.message}`, {
          details: { device_id: deviceId, reason: refusal.reason, ...(refusal.presented ? { presented_fingerprint: refusal.presented } : {}) },
        });
      }
      const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
      throw new LookoutError('device_unreachable', `${url.host}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
  }

  /** The device's refusal as the hub's error (its JSON error body read, bounded). */
  private async failure(deviceId: string, name: string, res: Response): Promise<LookoutError> {
    const text = (await res.text().catch(() => '')).slice(0, 2000);
    let code: string | undefined;
    let message = text.slice(0, 200);
    try {
      const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
      if (typeof body.error?.code === 'string') code = body.error.code;
      if (typeof body.error?.message === 'string') message = body.error.message.slice(0, 200);
    } catch {
      // not the device's JSON: its status says enough
    }
    const details = { device_id: deviceId, name, status: res.status, ...(code ? { device_code: code } : {}) };
    if (res.status === 404 && code === 'recording_not_found') return new LookoutError('recording_not_found', `${deviceId} has no ${name}`, { details });
    if (res.status === 401 || res.status === 403) {
      return new LookoutError('device_auth_refused', `the device refused the hub's tool credential for /recordings (${res.status})`, { details });
    }
    return new LookoutError('recordings_unavailable', `${deviceId} /recordings/${name}: ${res.status} ${code ?? ''} ${message}`.trim(), { details });
  }
}

/** `bytes <start>-<end>/<total>` of a 206 that must start at `from`; NaN otherwise. */
function rangeTotal(header: string | null, from: number): number {
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header ?? '');
  return m && Number(m[1]) === from ? Number(m[3]) : NaN;
}
