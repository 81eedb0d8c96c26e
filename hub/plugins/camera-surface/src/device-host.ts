import type { RegisteredDevice } from '../../registry/src/service.js';

/**
 * The address clients reach a device at: its tool server's host (the address the registry vetted
 * against the device networks), else the first address it announced; null when it has none.
 * An IPv6 host comes bracketed, ready for a URL.
 */
export function deviceHost(device: RegisteredDevice): string | null {
  if (device.toolUrl) return new URL(device.toolUrl).hostname;
  const ip = device.ips[0];
  if (ip === undefined) return null;
  return ip.includes(':') ? `[${ip}]` : ip;
}

/** Where the device's surfaces are, from the ports its hello announced; null for each it did not. */
export function surfaceUrls(device: RegisteredDevice) {
  const host = deviceHost(device);
  const ports = device.ports;
  const at = (port: unknown, make: (p: number) => string) => (host !== null && typeof port === 'number' ? make(port) : null);
  return {
    host,
    // https when the device's hello names `live` among its TLS surfaces.
    live: at(ports?.live, (p) => `${device.liveTls ? 'https' : 'http'}://${host}:${p}/live.h265`),
    rtspH265: at(ports?.rtsp, (p) => `rtsp://${host}:${p}/preview`),
    rtspH264: at(ports?.rtsp, (p) => `rtsp://${host}:${p}/preview_h264`),
    onvif: at(ports?.onvif, (p) => `http://${host}:${p}/onvif/device_service`),
  };
}
