import { z } from 'zod';
import { PortSchema } from './common.js';

/**
 * Listening ports of a device, by surface (DESIGN.md "Wire surfaces"). Only the tool server is
 * always there; the others appear with the plugins that open them. Unknown names pass through.
 */
export const DevicePortsSchema = z
  .looseObject({
    tools: PortSchema.describe('MCP tool server, 8765 on a device'),
    onvif: PortSchema.optional().describe('ONVIF SOAP, 80 on a device'),
    onvif_https: PortSchema.optional().describe('ONVIF SOAP over HTTPS with the device certificate, 443 on a device'),
    ws_discovery: PortSchema.optional().describe('WS-Discovery UDP, 3702'),
    live: PortSchema.optional().describe('live H.265 stream (Annex B over HTTP, GET /live.h265) from the encoder'),
    rtsp: PortSchema.optional().describe('RTSP preview, 8554, path /preview'),
    rtsps: PortSchema.optional().describe('RTSP preview over TLS with the device certificate, 322 on a device'),
    mesh: PortSchema.optional().describe('peer mesh UDP with HMAC, 11555'),
    sidecar: PortSchema.optional().describe('peer mTLS sidecar, 8777'),
  })
  .describe('listening ports by surface');
/** A device's listening ports as parsed (see DevicePortsSchema). */
export type DevicePorts = z.infer<typeof DevicePortsSchema>;
