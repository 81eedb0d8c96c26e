import { serviceToken } from 'lookout/core';

/**
 * The device's ONVIF service, for WS-Discovery (ProbeMatch and Hello carry its XAddrs and scopes):
 * the port the SOAP server listens on, the device service address for a host, and the ONVIF scopes.
 */
export interface OnvifService {
  readonly port: number;
  /** `http://<host>:<port>/onvif/device_service` (the host as the client reaches it; IPv6 bracketed by the caller). */
  xaddr(host: string): string;
  /** `onvif://www.onvif.org/...` scopes: Profile/Streaming, Profile/T, type/video_encoder, name/…, hardware/…. */
  readonly scopes: string[];
}

/** What strangers were refused before signing in, and what the ONVIF server holds now. */
export interface OnvifStatsService {
  stats(): OnvifStats;
}

export interface OnvifStats {
  /** Request bodies handed to the XML parser. */
  parsedBodies: number;
  /** Requests answered before their body was read or parsed (over a pre-auth bound: size, elements, time). */
  refusedUnread: number;
  /** Connections closed at arrival: over the per-address or total cap. */
  refusedConnections: number;
  /** Connections open now. */
  connections: number;
}

export const OnvifServiceToken = serviceToken<OnvifService>('onvif.device');
export const OnvifStatsToken = serviceToken<OnvifStatsService>('onvif.stats');

/** The XML namespaces of the ONVIF surface, for WS-Discovery, which speaks the same vocabulary. */
export { NS, declare, xmlEscape, type Prefix } from './soap/namespaces.js';

/** The device's WS-Discovery endpoint address, also GetEndpointReference's GUID: one formula for both plugins. */
export { endpointAddress } from './device/endpoint-address.js';
