import { deviceHost, deviceSurfaceUrl, type RegisteredDevice } from '../../registry/src/service.js';

/** Where the device's surfaces are (the registry's one URL rule), from the ports its hello announced; null for each it did not. */
export function surfaceUrls(device: RegisteredDevice) {
  return {
    host: deviceHost(device),
    live: deviceSurfaceUrl(device, 'live', '/live.h265'),
    rtspH265: deviceSurfaceUrl(device, 'rtsp', '/preview'),
    rtspH264: deviceSurfaceUrl(device, 'rtsp', '/preview_h264'),
    onvif: deviceSurfaceUrl(device, 'onvif', '/onvif/device_service'),
  };
}
