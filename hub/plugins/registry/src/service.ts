import { serviceToken, type DevicePorts } from 'lookout/core';

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
  lastHelloAt: number | null;
  image?: string;
  layer?: string;
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
