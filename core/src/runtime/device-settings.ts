import type { RuntimeInfo } from '../plugin/context.js';
import type { PluginStatus } from '../plugin/loader.js';
import { CORE_VERSION } from '../plugin/core-version.js';

/** A plugin as the firmware and health tools report it. */
export interface PluginReport {
  name: string;
  version: string;
  layer?: string;
  state: PluginStatus['state'];
  message?: string;
}

/**
 * What `lookout-edge` tells the base plugins beyond `RuntimeInfo`, carried in `runtime.settings`.
 * Read it through `deviceSettings()`, which fills defaults so a plugin also runs under a bare
 * loader (unit tests, third-party hosts).
 */
export interface DeviceSettings {
  /** Device roles, e.g. `camera` or `precision` (the image's role). */
  roles: string[];
  /** Role labels; the first is the device's `camera_id`. */
  labels: string[];
  /** `sim` when frames and sensors are simulated. */
  source?: 'sim';
  runtimeVersion: string;
  coreVersion: string;
  /** Ports asked for on the command line, by surface name (`onvif`, `rtsp`, …). */
  requestedPorts: Record<string, number>;
  /** True in the one-shot modes (`--health`, `--tool`): nothing listens, no bus. */
  oneShot: boolean;
  /** Every plugin of the image with its state, live (started, failed, stopped). */
  plugins(): PluginReport[];
  /** Plugins of the image left off, with why (above the active layer). */
  disabled(): { name: string; reason: string }[];
}

const SETTINGS_KEY = 'device';

export function withDeviceSettings(settings: Record<string, unknown>, device: DeviceSettings): Record<string, unknown> {
  return { ...settings, [SETTINGS_KEY]: device };
}

export function deviceSettings(runtime: RuntimeInfo): DeviceSettings {
  const given = runtime.settings[SETTINGS_KEY] as Partial<DeviceSettings> | undefined;
  const roles = given?.roles?.length ? given.roles : [runtime.image ?? 'camera'];
  const labels = given?.labels?.length ? given.labels : [runtime.role ?? roles[0]!];
  return {
    roles,
    labels,
    ...(given?.source ? { source: given.source } : {}),
    runtimeVersion: given?.runtimeVersion ?? '0.0.0',
    coreVersion: given?.coreVersion ?? CORE_VERSION,
    requestedPorts: given?.requestedPorts ?? {},
    oneShot: given?.oneShot ?? false,
    plugins: given?.plugins ?? (() => []),
    disabled: given?.disabled ?? (() => []),
  };
}

/**
 * The port a plugin should listen on for a surface: the one asked for on the command line, else
 * the device's port, except with `--source sim`, where an unset port is 0 (a free one) so that
 * several simulated devices run side by side. The plugin announces the port it got.
 */
export function surfacePort(runtime: RuntimeInfo, name: string, devicePort: number): number {
  const settings = deviceSettings(runtime);
  const asked = settings.requestedPorts[name];
  if (asked !== undefined) return asked;
  return settings.source === 'sim' ? 0 : devicePort;
}
