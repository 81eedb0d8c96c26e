import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deviceHost, deviceSurfaceUrl, type RegisteredDevice } from '../../../../../hub/plugins/registry/src/service.js';
import { surfaceUrls } from '../../../../../hub/plugins/camera-surface/src/surface-urls.js';
import { liveUrl } from '../../../../../hub/plugins/snapshots/src/tail-step.js';

const device = (over: Partial<RegisteredDevice>): RegisteredDevice => ({
  deviceId: 'cam-1',
  ips: ['10.0.0.9', '10.0.0.5'],
  labels: [],
  roles: [],
  ports: { tools: 8765, live: 8081, rtsp: 8554, rtsps: 322, onvif: 80 },
  source: 'hello',
  namedInFile: false,
  toolUrl: 'http://10.0.0.5:8765/mcp',
  lastHelloAt: null,
  ...over,
});

describe('the device-surface URL rule (registry)', () => {
  it('takes the vetted tool-server host over the announced addresses, with each surface its scheme', () => {
    const d = device({});
    assert.equal(deviceHost(d), '10.0.0.5');
    assert.equal(deviceSurfaceUrl(d, 'live', '/live.h265'), 'http://10.0.0.5:8081/live.h265');
    assert.equal(deviceSurfaceUrl(device({ liveTls: true }), 'live', '/live.h265'), 'https://10.0.0.5:8081/live.h265');
    assert.equal(deviceSurfaceUrl(d, 'rtsp', '/preview_h264'), 'rtsp://10.0.0.5:8554/preview_h264');
    assert.equal(deviceSurfaceUrl(d, 'rtsps', '/preview_h264'), 'rtsps://10.0.0.5:322/preview_h264');
    assert.equal(deviceSurfaceUrl(d, 'onvif', '/onvif/device_service'), 'http://10.0.0.5:80/onvif/device_service');
  });

  it('has no URL for a port not announced; an unvetted device has its first address shown, never one to open', () => {
    assert.equal(deviceSurfaceUrl(device({ ports: { tools: 8765 } }), 'rtsp', '/preview'), null);
    const unvetted = device({ toolUrl: null, ips: ['fd00::5'] });
    assert.equal(deviceSurfaceUrl(unvetted, 'rtsp', '/preview'), 'rtsp://[fd00::5]:8554/preview');
    assert.equal(deviceSurfaceUrl(unvetted, 'live', '/live.h265', { contactedOnly: true }), null);
    assert.equal(deviceSurfaceUrl(device({ toolUrl: null, ips: [] }), 'rtsp', '/preview'), null);
    assert.equal(deviceHost(device({ toolUrl: 'https://[fd00::7]:8765/mcp' })), '[fd00::7]');
  });

  it('is the rule camera-surface shows and snapshots opens', () => {
    const d = device({ liveTls: true });
    assert.equal(surfaceUrls(d).live, liveUrl(d));
    assert.equal(surfaceUrls(d).rtspH264, deviceSurfaceUrl(d, 'rtsp', '/preview_h264'));
    assert.throws(() => liveUrl(device({ toolUrl: null })), { code: 'live_stream_unavailable' });
  });
});
