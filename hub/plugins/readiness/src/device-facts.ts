import type { DevicePorts } from 'lookout/core/contracts';
import type { PluginReport } from 'lookout/core';

/** What a probe of the device came to: the value, or the code and reason of its failure. */
export type Probe<T> = { ok: true; value: T } | { ok: false; code: string; reason: string };

/** The enriched get_system_health answer: the device's result with the hub's enrichment fields in it. */
export type HealthAnswer = Record<string, unknown>;

/** A peer_hello acknowledgement as A2A_PEERS gave it (PeerHelloAck plus rtt and sidecar address). */
export type PeerHelloValue = Record<string, unknown>;

/**
 * Everything one readiness check of one device gathered, taken at `at` (epoch ms). The graders
 * read only this (no clock, no I/O), so a check can be recorded and graded again in a unit test.
 */
export interface DeviceFacts {
  deviceId: string;
  at: number;
  /** The registry's entry; null when the device is only on the bus (the hub may not contact it). */
  registered: {
    toolUrl: string | null;
    unreachableReason: string | null;
    /** The host of its tool URL: where the hub reaches its other surfaces. */
    host: string | null;
    ports: DevicePorts | null;
    layer: string | null;
    image: string | null;
    /** When its certificate ends (its hello's `cert_not_after`); absent or null when it announced none. */
    certNotAfter?: string | null;
  } | null;
  /** From the bus cache now. */
  presence: 'online' | 'offline' | 'stale' | 'unknown';
  /** get_system_health through the hub's tool proxy, enriched (DEVICE_TOOLS.enrichedHealth). */
  health: Probe<HealthAnswer>;
  /**
   * The plugins the device reports: from its health answer, else the newest of its status, health
   * and hello on the bus; null when it never reported them. `source` says which.
   */
  plugins: { list: PluginReport[]; source: string } | null;
  /** The active layer (its hello, through the registry; else its firmware report); null when unknown. */
  layer: string | null;
  /** peer_hello over mTLS (A2A_PEERS); `absent` when the hub runs no a2a plugin. */
  peerHello: Probe<PeerHelloValue> | { absent: string };
  /** get_recording_status; null when not asked (the device reports no recorder). */
  recording: Probe<Record<string, unknown>> | null;
  /** get_live_status; null when not asked (the device reports no rtsp plugin). */
  liveStatus: Probe<Record<string, unknown>> | null;
  /** A TCP connection to its announced ONVIF port; null when not tried (no onvif plugin, no port, no host). */
  onvifConnect: Probe<{ address: string }> | null;
  /** Recording chunks the bus cache holds from its data_manifest. */
  manifest: { chunks: number; newest: { name: unknown; started_at: unknown } | null };
  /** Its newest dets on the bus: how many detections carry the depth layer's x, y, z. */
  dets: { at: string; detections: number; spatial: number } | null;
  /** Hub routes the video modules need; null when the route catalogue is not available. */
  hubRoutes: { playback: boolean; snapshot: boolean } | null;
}

export function pluginOf(facts: DeviceFacts, name: string): PluginReport | undefined {
  return facts.plugins?.list.find((p) => p.name === name);
}

/** `failed (code: message)`, `ok`: a plugin's state as a reason says it. */
export function describePlugin(p: PluginReport): string {
  const why = [p.code, p.message].filter((s) => s !== undefined && s !== '').join(': ');
  return why ? `${p.state} (${why})` : p.state;
}
