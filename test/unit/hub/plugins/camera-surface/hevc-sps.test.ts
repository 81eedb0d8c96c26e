import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hevcSpsSize, hevcStreamSize } from '../../../../../hub/plugins/camera-surface/src/hevc-sps.js';
import { surfaceUrls } from '../../../../../hub/plugins/camera-surface/src/surface-urls.js';
import type { RegisteredDevice } from '../../../../../hub/plugins/registry/src/service.js';

// SPS NALs libx265 wrote for one 320x240 and one 320x180 picture (180 is coded as 184, cropped by the conformance window).
const SPS_320x240 = '4201010408000003009e0800000300003c90014101e2cb2b349265780b702020004000000300400000030142';
const SPS_320x180 = '4201010408000003009e0800000300003c9001410173e5cb2b349265780b702020004000000300400000030142';

describe('H.265 SPS size', () => {
  it('reads the coded size, less the conformance window, across emulation prevention bytes', () => {
    assert.deepEqual(hevcSpsSize(Buffer.from(SPS_320x240, 'hex')), { width: 320, height: 240 });
    assert.deepEqual(hevcSpsSize(Buffer.from(SPS_320x180, 'hex')), { width: 320, height: 180 });
  });

  it('finds the SPS in an Annex B stream, and says undefined before one arrives', () => {
    const start = Buffer.from([0, 0, 0, 1]);
    const vps = Buffer.from('40010c01ffff', 'hex');
    assert.deepEqual(hevcStreamSize(Buffer.concat([start, vps, start, Buffer.from(SPS_320x240, 'hex'), start, Buffer.from('4401c172b46240', 'hex')])), {
      width: 320,
      height: 240,
    });
    assert.equal(hevcStreamSize(Buffer.concat([start, vps])), undefined);
  });

  it('refuses a truncated SPS instead of inventing a size', () => {
    assert.throws(() => hevcSpsSize(Buffer.from(SPS_320x240.slice(0, 30), 'hex')), RangeError);
  });
});

describe('device surface addresses', () => {
  const device = (over: Partial<RegisteredDevice>): RegisteredDevice => ({
    deviceId: 'cam-1',
    ips: ['10.0.0.5'],
    labels: [],
    roles: [],
    ports: { tools: 8765, rtsp: 8554, onvif: 80 },
    source: 'hello',
    namedInFile: false,
    toolUrl: 'http://10.0.0.5:8765/mcp',
    lastHelloAt: null,
    ...over,
  });

  it('builds the RTSP and ONVIF addresses from the announced ports, none for a port not announced', () => {
    const u = surfaceUrls(device({}));
    assert.equal(u.rtspH265, 'rtsp://10.0.0.5:8554/preview');
    assert.equal(u.rtspH264, 'rtsp://10.0.0.5:8554/preview_h264');
    assert.equal(u.onvif, 'http://10.0.0.5:80/onvif/device_service');
    assert.equal(u.live, null);
  });

  it('brackets an IPv6 address, and has no address for a device without one', () => {
    assert.equal(surfaceUrls(device({ toolUrl: null, ips: ['fd00::5'] })).rtspH265, 'rtsp://[fd00::5]:8554/preview');
    assert.equal(surfaceUrls(device({ toolUrl: 'http://[fd00::5]:8765/mcp' })).onvif, 'http://[fd00::5]:80/onvif/device_service');
    assert.equal(surfaceUrls(device({ toolUrl: null, ips: [] })).rtspH265, null);
  });
});
