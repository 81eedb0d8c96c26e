import { decideSurfaceTransport, type SurfaceTransport } from 'lookout/lib/tls';

export interface LiveTransportInput {
  /** Where the live stream listens. */
  host: string;
  dataDir: string;
  /** LIVE_TLS. */
  mode: 'auto' | 'on' | 'off';
  /** LIVE_HOST was not set: the stream sits beside the tool server and follows its transport on loopback. */
  besideToolServer: boolean;
  /** The host's TLS surfaces (deviceInfo().tlsSurfaces): `tools` when the tool server serves HTTPS. */
  tlsSurfaces: readonly string[];
}

/**
 * How the live stream serves, by the tool server's rule (core's decideSurfaceTransport): beyond
 * loopback HTTPS with the device certificate unless LIVE_TLS=off says plain HTTP is meant; on
 * loopback plain unless asked: LIVE_TLS=on, or (auto) the tool server beside it serves HTTPS, so that
 * a device the hub dials over https has its live stream dialled the same way. `missing`: TLS is
 * required and the device has no certificate (the caller keeps the stream on loopback and says why).
 */
export function decideLiveTransport(o: LiveTransportInput): SurfaceTransport {
  const asked = o.mode === 'on' || (o.mode === 'auto' && o.besideToolServer && o.tlsSurfaces.includes('tools'));
  return decideSurfaceTransport(o.host, o.dataDir, { tls: asked, insecureHttp: o.mode === 'off' });
}
