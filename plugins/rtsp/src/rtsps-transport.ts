import { decideSurfaceTransport, type SurfaceTransport } from 'lookout/lib/tls';

/** RTSPS's place: `none` (RTSP only), or the device surfaces' decision (`https`, or `missing` when its certificate is not there). */
export type RtspsTransport = { scheme: 'none' } | Exclude<SurfaceTransport, { scheme: 'http' }>;

/**
 * Whether RTSPS listens beside RTSP, by the device surfaces' rule (core's decideSurfaceTransport):
 * beyond loopback TLS with the device certificate, on loopback only when asked (RTSPS=on). Unlike
 * the tool server and the live stream, plain RTSP stays beside it whatever is decided: video
 * software that speaks no RTSPS still connects, with Digest as before.
 */
export function decideRtspsTransport(host: string, dataDir: string, mode: 'auto' | 'on' | 'off'): RtspsTransport {
  if (mode === 'off') return { scheme: 'none' };
  const decided = decideSurfaceTransport(host, dataDir, { tls: mode === 'on' });
  return decided.scheme === 'http' ? { scheme: 'none' } : decided;
}
