import type { BusPort, ToolRegistry } from 'lookout/core/host';
import { deviceGaugesText, gbToBytes, PROMETHEUS_TEXT_TYPE, sampleFromMessages, type DeviceGaugeSample } from 'lookout/lib/metrics';
import type { PluginReport } from 'lookout/core';

/** The messages whose latest copy the gauges read. */
const WATCHED = new Set(['status', 'telemetry', 'health', 'dets']);
/** A scrape waits this long for the recorder's answer, then leaves the recorder's series out. */
const RECORDER_TIMEOUT_MS = 2_000;

export interface DeviceMetricsOptions {
  deviceId: string;
  tools: ToolRegistry;
  /** Whether the device is on the bus now. */
  connected: () => boolean;
  plugins: () => readonly PluginReport[];
}

/**
 * The device's own `GET /metrics` on its tool server: the same `lookout_device_*` gauges as the
 * hub's, for this device, from what it last published (kept raw, parsed only at a scrape: the
 * telemetry goes out ten times a second) and from its recorder's `get_recording_status` (writing,
 * storage) when the image has one.
 */
export class DeviceMetrics {
  private readonly latest = new Map<string, Buffer | string>();
  private recorder: { writing: boolean | null; health: string | null; freeBytes: number | null } | undefined;

  constructor(private readonly options: DeviceMetricsOptions) {}

  /** A bus that behaves as `bus` and keeps the latest payload of the watched topics of this device. */
  observe(bus: BusPort): BusPort {
    const prefix = `devices/${this.options.deviceId}/`;
    const publish: BusPort['publish'] = (topic, payload, options) => {
      if (topic.startsWith(prefix) && WATCHED.has(topic.slice(prefix.length))) this.latest.set(topic.slice(prefix.length), payload);
      return bus.publish(topic, payload, options);
    };
    return {
      publish,
      subscribe: (filter, handler, options) => bus.subscribe(filter, handler, options),
      get connected() {
        return bus.connected;
      },
      onConnect: (listener) => bus.onConnect(listener),
      close: () => bus.close(),
    };
  }

  async text(): Promise<{ body: string; contentType: string }> {
    this.recorder = await this.recorderStatus();
    return { body: deviceGaugesText([this.sample()]), contentType: PROMETHEUS_TEXT_TYPE };
  }

  private sample(): DeviceGaugeSample {
    const parsed = (key: string): unknown => {
      const raw = this.latest.get(key);
      if (raw === undefined) return undefined;
      try {
        return JSON.parse(raw.toString()) as unknown;
      } catch {
        return undefined;
      }
    };
    const plugins = this.options.plugins();
    const sample = sampleFromMessages(
      this.options.deviceId,
      { status: parsed('status'), telemetry: parsed('telemetry'), health: parsed('health'), dets: parsed('dets') },
      {
        online: this.options.connected(),
        recorder_writing: this.recorder?.writing ?? null,
        ...(plugins.length > 0 ? { plugins_failed: plugins.filter((p) => p.state === 'failed').length } : {}),
      },
    );
    // The recorder's answer is newer than the health message's (every 30 s).
    if (this.recorder?.health) sample.storage_health = this.recorder.health;
    if (this.recorder?.freeBytes != null) sample.storage_free_bytes = this.recorder.freeBytes;
    return sample;
  }

  private async recorderStatus(): Promise<DeviceMetrics['recorder']> {
    if (!this.options.tools.get('get_recording_status')?.handler) return undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const signal = AbortSignal.timeout(RECORDER_TIMEOUT_MS);
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), RECORDER_TIMEOUT_MS)));
      const r = (await Promise.race([this.options.tools.call('get_recording_status', {}, { signal }), late])) as Record<string, unknown>;
      return {
        writing: typeof r.is_writing_data === 'boolean' ? r.is_writing_data : null,
        health: typeof r.storage_health === 'string' ? r.storage_health : null,
        freeBytes: gbToBytes(r.storage_free_gb),
      };
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
