import type { BusHealth } from '../bus/bus-port.js';
import type { RuntimeInfo } from './context.js';
import { CORE_VERSION } from './core-version.js';
import type { AutomationLogEvent } from '../contracts/event-message.js';

/** What a plugin did on its own (a prune, a thermal suspension): an events/automation_log message without its timestamp and type. */
export interface AutomationEntry {
  action: AutomationLogEvent['action'];
  plugin: string;
  trigger: string;
  outcome: AutomationLogEvent['outcome'];
  message: string;
  details?: Record<string, unknown>;
}

/** A plugin's state as the runtime reports it: its own health, or `skipped`/`stopped` set by the loader. */
export type PluginState = 'starting' | 'ok' | 'degraded' | 'failed' | 'skipped' | 'stopped';

/** A plugin as status, hello, the firmware and health tools report it. */
export interface PluginReport {
  name: string;
  version: string;
  layer?: string;
  state: PluginState;
  /** Why it failed or was skipped: an error code (`model_shape_mismatch`, `dependency_failed`…). */
  code?: string;
  message?: string;
}

/** A restart of a failed or skipped plugin (restart_plugin), once it is over: for a plugin to tell the fleet (events/automation_log). */
export interface PluginRestart {
  /** The plugin's report after the restart: `ok` (or degraded) when it came back, `failed` again otherwise. */
  plugin: PluginReport;
  /** The plugins skipped because of it that came back with it. */
  dependents: string[];
  /** When it was asked (ISO 8601). */
  at: string;
}

/**
 * What the device host (`lookout-edge`) tells plugins beyond the common `RuntimeInfo`. Read it
 * through `deviceInfo(runtime)`, which fills defaults so a plugin also runs under a bare loader
 * (unit tests, third-party hosts).
 */
export interface DeviceInfo {
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
  /** Address the device's surfaces listen on: the tool server's (`--tool-host`); 127.0.0.1 unless told. */
  listenHost: string;
  /** Surfaces (names in hello's `ports`) that serve TLS with the device certificate: `tools` when the tool server does. */
  tlsSurfaces: string[];
  /** True in the one-shot modes (`--health`, `--tool`): nothing listens, no bus. */
  oneShot: boolean;
  /** The broker link and the outbox of a device on MQTT (null on an in-process bus), live. */
  bus(): BusHealth | null;
  /** Every plugin of the image with its state, live (started, failed, skipped, stopped). */
  plugins(): PluginReport[];
  /** Plugins of the image left off, with why (above the active layer). */
  disabled(): { name: string; reason: string }[];
  /** Called when a plugin's state changes after start (failed, skipped, restarted). */
  onPluginChange(listener: (plugin: PluginReport) => void): () => void;
  /** Called after each restart of a plugin (restart_plugin), with how it went. */
  onPluginRestart(listener: (restart: PluginRestart) => void): () => void;
  /**
   * Tells the fleet what a plugin did on its own (events/automation_log has one owner, the status
   * plugin, which publishes every entry reported here). Never throws; without a listener the host
   * keeps the last few for the first one.
   */
  reportAutomation(entry: AutomationEntry): void;
  /** Where the owner of events/automation_log hears the entries (with `at`, when they were reported). */
  onAutomation(listener: (entry: AutomationEntry, at: Date) => void): () => void;
}

/** The device facts the host set on `runtime.device`, with defaults filled in from the image and role. */
export function deviceInfo(runtime: RuntimeInfo): DeviceInfo {
  const given = runtime.device;
  const roles = given?.roles?.length ? given.roles : [runtime.image ?? 'camera'];
  const labels = given?.labels?.length ? given.labels : [runtime.role ?? roles[0]];
  return {
    roles,
    labels,
    ...(given?.source ? { source: given.source } : {}),
    runtimeVersion: given?.runtimeVersion ?? '0.0.0',
    coreVersion: given?.coreVersion ?? CORE_VERSION,
    requestedPorts: given?.requestedPorts ?? {},
    listenHost: given?.listenHost ?? '127.0.0.1',
    tlsSurfaces: given?.tlsSurfaces ?? [],
    oneShot: given?.oneShot ?? false,
    bus: given?.bus ?? (() => null),
    plugins: given?.plugins ?? (() => []),
    disabled: given?.disabled ?? (() => []),
    onPluginChange: given?.onPluginChange ?? (() => () => undefined),
    onPluginRestart: given?.onPluginRestart ?? (() => () => undefined),
    reportAutomation: given?.reportAutomation ?? (() => undefined),
    onAutomation: given?.onAutomation ?? (() => () => undefined),
  };
}

/**
 * The port a plugin should listen on for a surface: the one asked for on the command line, else
 * the device's port, except with `--source sim`, where an unset port is 0 (a free one) so that
 * several simulated devices run side by side. The plugin announces the port it got.
 */
export function surfacePort(runtime: RuntimeInfo, name: string, devicePort: number): number {
  const info = deviceInfo(runtime);
  const asked = info.requestedPorts[name];
  if (asked !== undefined) return asked;
  return info.source === 'sim' ? 0 : devicePort;
}
