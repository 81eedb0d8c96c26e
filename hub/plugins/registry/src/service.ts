import { serviceToken } from 'lookout/core';
import { type DevicePorts } from 'lookout/core/contracts';

export type DeviceSource = 'file' | 'hello' | 'file+hello';

export interface RegisteredDevice {
  deviceId: string;
  ips: string[];
  labels: string[];
  roles: string[];
  ports: DevicePorts | null;
  source: DeviceSource;
  /** Named in the registry file: contacted even outside the device networks. */
  namedInFile: boolean;
  /** Where its tool server is, or null when the hub may not contact it. */
  toolUrl: string | null;
  /** Why toolUrl is null. */
  unreachableReason?: string;
  /**
   * Over https (the hello announces `tls: ["tools"]` or `["live"]`, or the file's tool_url is https): the SHA-256
   * (colon hex) the device's certificate must have, from its hello's `cert_fingerprint`; null when it
   * announced none (then every connection is refused). Absent over plain http.
   */
  tlsFingerprint?: string | null;
  /**
   * When its certificate ends (ISO 8601), from its hello's `cert_not_after`; absent when the hello
   * announced none (a device before it). Readiness warns 30 days ahead and fails it once ended.
   */
  certNotAfter?: string;
  /** Its live stream speaks TLS (the hello's `tls` names `live`): the hub reads it over https, pinned to `tlsFingerprint`. */
  liveTls?: boolean;
  lastHelloAt: number | null;
  /** Its hello was reloaded from the hub's saved state: announced before the last restart, none since. */
  restored?: boolean;
  /** The address its bus connection came from when it said hello (embedded broker): used in place of the hello's. */
  connectedFrom?: string;
  /** Labels its hello announces that it does not hold (another device claimed them first, or the registry file gives them). */
  refusedLabels?: string[];
  image?: string;
  layer?: string;
  /**
   * Where the hub reaches it over SSH (device-ssh), or null when it may not contact it. The
   * registry always sets it; optional so that devices built by hand (tests) need not.
   */
  ssh?: DeviceSshAddress | null;
}

/** Where a device keeps its recordings unless the registry file says otherwise (spec 02's paths). */
export const DEFAULT_RECORDINGS_ROOT = '/data/recordings';

/** A device's SSH address and the one remote directory the hub may read. */
export interface DeviceSshAddress {
  host: string;
  port: number;
  user: string;
  /** Absolute path on the device (registry file `recordings_root`, default /data/recordings). */
  recordingsRoot: string;
  /**
   * The host is the registry file's word (its ssh_host, ips or tool_url), not an address from a
   * hello, which any bus client can publish. Only such a host's key may be pinned on first use.
   */
  hostFromFile: boolean;
}

/**
 * The host clients reach a device at: its tool server's host (the address the registry vetted
 * against the device networks), else the first address it announced (shown, never contacted: a
 * device without a tool URL is not resolved for a call); null when it has none. An IPv6 host comes
 * bracketed, ready for a URL.
 */
export function deviceHost(device: RegisteredDevice): string | null {
  if (device.toolUrl) return new URL(device.toolUrl).hostname;
  const ip = device.ips[0];
  if (ip === undefined) return null;
  return ip.includes(':') ? `[${ip}]` : ip;
}

/** A device surface whose URL the hub builds from the port its hello announced. */
export type DeviceSurface = 'live' | 'rtsp' | 'rtsps' | 'onvif';

const SURFACE_SCHEME: Record<DeviceSurface, (device: RegisteredDevice) => string> = {
  // https when the device's hello names `live` among its TLS surfaces (read pinned to its certificate).
  live: (d) => (d.liveTls ? 'https' : 'http'),
  rtsp: () => 'rtsp',
  rtsps: () => 'rtsps',
  onvif: () => 'http',
};

/**
 * The one rule for a device surface's URL (the live stream, RTSP/RTSPS previews, ONVIF):
 * `<scheme>://<deviceHost>:<the surface's port in its hello><path>`; null when its hello announces
 * no such port or it has no address. `contactedOnly`: only the vetted tool-server host, never an
 * announced address (for a URL the hub itself opens).
 */
export function deviceSurfaceUrl(device: RegisteredDevice, surface: DeviceSurface, path: string, o: { contactedOnly?: boolean } = {}): string | null {
  const port = device.ports?.[surface];
  const host = o.contactedOnly && !device.toolUrl ? null : deviceHost(device);
  if (typeof port !== 'number' || host === null) return null;
  return `${SURFACE_SCHEME[surface](device)}://${host}:${port}${path}`;
}

/** Devices the hub knows (registry file merged with hello announcements) and how to reach them. */
export interface DeviceRegistry {
  list(): RegisteredDevice[];
  get(deviceId: string): RegisteredDevice | undefined;
  /** A tools/call target (device id, address or label such as "canary") to one device; throws target_unknown. */
  resolve(target: string): RegisteredDevice;
  readonly busId: string;
  readonly lanIp: string;
  readonly path: string;
}

export const DEVICE_REGISTRY = serviceToken<DeviceRegistry>('device-registry');

/**
 * Which devices may have an entry in the bus cache besides those that announced a valid hello: a
 * made-up device id in a topic must not create one (a `status` under `devices/<any id>/` would add
 * a device to /fleet/mqtt/latest). The bus cache provides it (the registry depends on the cache, so
 * the cache cannot require the registry); the registry adds the devices its file names, and the
 * hub's bus identity may add the devices it authenticated.
 */
export interface DeviceAdmission {
  /** Adds a rule: a device any rule admits gets an entry from any of its topics. Returns the rule's removal. */
  admitWhen(rule: (deviceId: string) => boolean): () => void;
}

export const DEVICE_ADMISSION = serviceToken<DeviceAdmission>('device-admission');
