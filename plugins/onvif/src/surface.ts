import type { CameraProfileService } from '../../camera-profile/src/service.js';
import type { DeviceStore } from './device/device-store.js';
import type { EncoderState, MediaProfile } from './media/media-model.js';

/** The ONVIF service paths (ONVIF Device Manager-style clients need exactly `onvif/device_service`). */
export const PATHS = {
  device: '/onvif/device_service',
  media: '/onvif/media_service',
  media2: '/onvif/media2_service',
  events: '/onvif/events_service',
  imaging: '/onvif/imaging_service',
  subscription: '/onvif/subscription/',
  snapshot: '/onvif/snapshot.jpg',
} as const;

export interface DeviceInformation {
  manufacturer: string;
  model: string;
  firmwareVersion: string;
  serialNumber: string;
  hardwareId: string;
}

/** What the SOAP services read and change, behind one interface (the plugin wires it to the services of other plugins). */
export interface OnvifSurface {
  /** The port the SOAP server listens on (the one clients reach). */
  port(): number;
  /** The port of the same services over HTTPS with the device certificate; undefined when HTTPS is off. */
  httpsPort(): number | undefined;
  profiles(): MediaProfile[];
  encoder(): EncoderState;
  cameraProfile: CameraProfileService;
  /** The RTSP server's port. */
  rtspPort(): number;
  information(): DeviceInformation;
  /** All scopes now: the fixed ones, then the configurable ones (SetScopes's, else the defaults). */
  scopes(): string[];
  fixedScopes(): string[];
  hostname(): string;
  /** The users, the configurable scopes, NTP and time zone clients set, persisted. */
  store: DeviceStore;
  /** The device's WS-Discovery endpoint address (`urn:uuid:…`), GetEndpointReference's GUID. */
  endpointReference: string;
  /** Stable per device: the MAC of a simulated interface derives from it. */
  serial: string;
  /** Raised after SetVideoEncoderConfiguration changed the profile. */
  configurationChanged(token: string, type: string): void;
  now(): number;
}

/** Per request: the address this client reached the device at, for every URI handed back. */
export interface RequestInfo {
  /** Host part of URIs (IPv6 in brackets). */
  host: string;
  /** The request came over HTTPS: the URIs handed back are https too (as cameras answer on the scheme asked). */
  secure?: boolean;
  /** Who asks: the user the request authenticated as ('' without a password) and the remote address, `user@address`. */
  client: string;
}

export function baseUrl(surface: OnvifSurface, req: RequestInfo): string {
  const https = req.secure ? surface.httpsPort() : undefined;
  return https !== undefined ? `https://${req.host}:${https}` : `http://${req.host}:${surface.port()}`;
}
