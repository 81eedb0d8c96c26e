import { request, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { deviceTlsRefusalOf } from 'lookout/lib/tls';
import { hevcStreamSize } from './hevc-sps.js';

export interface LiveProbe {
  up: boolean;
  /** The live stream's codec and the size its SPS declares, when up. */
  codec: 'H265' | null;
  resolution: string | null;
  /** Why it is not up (the device's own error, a refused connection, a timeout). */
  reason: string | null;
}

/** Bytes read of the stream at most: the latest GOP it starts with begins with the parameter sets. */
const MAX_PROBE_BYTES = 512 * 1024;

/**
 * Is a device's live stream (`GET /live.h265` on its `live` port) serving? One short connection
 * with the device's tool token, as the hub's snapshot tail connects: 200 and a keyframe's SPS
 * within the time is up (with the size the encoder really runs at); the device's JSON error, a
 * refused connection or silence is down with the reason. Never holds the connection longer.
 * An https url goes through `agent` (the fleet CA only, the device's certificate pinned): a refused
 * certificate is down with `device_tls_mismatch` and its reason.
 */
export function probeLive(url: string, token: string | undefined, timeoutMs: number, signal: AbortSignal, agent?: HttpsAgent): Promise<LiveProbe> {
  return new Promise((resolve) => {
    let settled = false;
    const chunks: Buffer[] = [];
    let bytes = 0;
    const done = (p: LiveProbe) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      req.destroy();
      resolve(p);
    };
    const down = (reason: string): LiveProbe => ({ up: false, codec: null, resolution: null, reason });
    const options = { method: 'GET', headers: token ? { authorization: `Bearer ${token}` } : {} };
    const onResponse = (res: IncomingMessage): void => {
      if (res.statusCode !== 200) {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (text.length < 4096) text += c;
        });
        res.on('end', () => done(down(`the live stream answered ${res.statusCode}: ${errorMessage(text)}`)));
        res.on('error', (err) => done(down(`the live stream answered ${res.statusCode}: ${err.message}`)));
        return;
      }
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        bytes += c.length;
        let size: { width: number; height: number } | undefined;
        try {
          size = hevcStreamSize(Buffer.concat(chunks));
        } catch {
          // A malformed SPS: the stream is up, its size unknown.
          return done({ up: true, codec: 'H265', resolution: null, reason: null });
        }
        if (size) done({ up: true, codec: 'H265', resolution: `${size.width}x${size.height}`, reason: null });
        else if (bytes > MAX_PROBE_BYTES) done({ up: true, codec: 'H265', resolution: null, reason: null });
      });
      res.on('end', () => done(down('the live stream ended before its first picture')));
      res.on('error', (err) => done(down(`the live stream failed: ${err.message}`)));
    };
    const req = url.startsWith('https:') ? httpsRequest(url, { ...options, ...(agent ? { agent } : {}) }, onResponse) : request(url, options, onResponse);
    req.on('error', (err) => {
      const refused = deviceTlsRefusalOf(err);
      done(down(refused ? `device_tls_mismatch (${refused.reason}): ${refused.message}` : `the live stream cannot be reached: ${err.message}`));
    });
    req.end();
    const timer = setTimeout(() => done(down(`no picture from the live stream within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => done(down('the request was cancelled'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error?.message) return `${body.error.code ?? 'error'}: ${body.error.message}`;
  } catch {
    // not the device's JSON error
  }
  return text.slice(0, 200) || 'no body';
}
