import { LookoutError, toLookoutError } from 'lookout/core';
import type { DeviceRegistry, RegisteredDevice } from '../../registry/src/service.js';
import type { DeviceTools, ListedTool } from '../../tools-proxy/src/service.js';

/** A device tool as the hub lists it: `<device>.<tool>`, the device's own schemas and annotations. */
export interface HubListedTool extends ListedTool {
  _meta: { 'lookout/device_id': string; 'lookout/tool': string };
}

/** A device that could not list its tools this time: left out of tools/list, and said so in its `_meta`. */
export interface Unlisted {
  device_id: string;
  code: string;
}

export interface DeviceToolCatalogOptions {
  registry: DeviceRegistry;
  tools: DeviceTools;
  /** How long a device's tools/list answer serves (tools change only with the device's plugins). */
  ttlMs: number;
  /** Devices asked for their tools at once. */
  concurrency: number;
}

/**
 * Every registered device's tools, named `<device>.<tool>`: the device's description, input and
 * output JSON Schemas and annotations (readOnlyHint…) passed on as the device declares them, so an
 * MCP client validates and plans as it would against the device itself. Listings are asked through
 * the tools-proxy service (the device's credential, TLS pin, timeout) and kept `ttlMs`.
 */
export class DeviceToolCatalog {
  /** A device's listing, or its failure: a device that is down costs one attempt per `ttlMs`, not one per tools/list. */
  private readonly kept = new Map<string, { at: number; tools: ListedTool[] } | { at: number; error: unknown }>();

  constructor(private readonly options: DeviceToolCatalogOptions) {}

  /**
   * One page of the listing: the tools of up to `page.devices` devices in id order, from the first
   * device whose id sorts after `page.after`; `next` is the last device of the page when more follow.
   * A page asks only its own devices, so a tools/list of a big fleet costs a page's worth at a time.
   */
  async list(signal: AbortSignal, page: { after?: string; devices: number }): Promise<{ tools: HubListedTool[]; unlisted: Unlisted[]; next?: string }> {
    const all = this.options.registry
      .list()
      .filter((d) => d.toolUrl !== null && (page.after === undefined || d.deviceId > page.after))
      .sort((a, b) => (a.deviceId < b.deviceId ? -1 : a.deviceId > b.deviceId ? 1 : 0));
    const devices = all.slice(0, page.devices);
    const listed = new Map<string, ListedTool[]>();
    const unlisted: Unlisted[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < devices.length && !signal.aborted) {
        const device = devices[next++];
        try {
          listed.set(device.deviceId, await this.toolsOf(device, signal));
        } catch (err) {
          unlisted.push({ device_id: device.deviceId, code: toLookoutError(err).code });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, devices.length) }, worker));
    const tools: HubListedTool[] = [];
    for (const device of devices) {
      for (const tool of listed.get(device.deviceId) ?? []) tools.push(hubTool(device.deviceId, tool));
    }
    unlisted.sort((a, b) => (a.device_id < b.device_id ? -1 : 1));
    return all.length > devices.length ? { tools, unlisted, next: devices[devices.length - 1].deviceId } : { tools, unlisted };
  }

  /**
   * The device and tool a `<device>.<tool>` name means: the device id is what comes before the last
   * dot (ids may hold dots, tool names do not). Unknown device: target_unknown.
   */
  resolve(name: string): { device: RegisteredDevice; tool: string } {
    const dot = name.lastIndexOf('.');
    if (dot <= 0 || dot === name.length - 1) {
      throw new LookoutError('tool_unknown', `unknown tool ${JSON.stringify(name.slice(0, 200))}: fleet tools have no dot, device tools are <device>.<tool>`);
    }
    const deviceId = name.slice(0, dot);
    const device = this.options.registry.get(deviceId);
    if (!device)
      throw new LookoutError('target_unknown', `no registered device ${JSON.stringify(deviceId.slice(0, 200))}`, {
        details: { device_id: deviceId.slice(0, 200) },
      });
    return { device, tool: name.slice(dot + 1) };
  }

  /** One device's tools as the hub lists them; rejects when the device cannot list them. */
  async toolsOfDevice(device: RegisteredDevice, signal: AbortSignal): Promise<HubListedTool[]> {
    return (await this.toolsOf(device, signal)).map((t) => hubTool(device.deviceId, t));
  }

  /** The device's listing of `tool`, when the device answered one (for its output schema). */
  async listing(device: RegisteredDevice, tool: string, signal: AbortSignal): Promise<ListedTool | undefined> {
    try {
      return (await this.toolsOf(device, signal)).find((t) => t.name === tool);
    } catch {
      return undefined;
    }
  }

  private async toolsOf(device: RegisteredDevice, signal: AbortSignal): Promise<ListedTool[]> {
    const key = `${device.deviceId} ${device.toolUrl ?? ''}`;
    const hit = this.kept.get(key);
    if (hit && Date.now() - hit.at < this.options.ttlMs) {
      if ('error' in hit) throw hit.error;
      return hit.tools;
    }
    let tools: ListedTool[];
    try {
      tools = await this.options.tools.listTools(device, signal);
    } catch (err) {
      // The caller's own abort says nothing about the device.
      if (!signal.aborted) this.kept.set(key, { at: Date.now(), error: err });
      throw err;
    }
    this.kept.set(key, { at: Date.now(), tools });
    // Devices that left the registry do not keep their listings.
    if (this.kept.size > 2 * this.options.registry.list().length + 16) this.kept.clear();
    return tools;
  }
}

function hubTool(deviceId: string, tool: ListedTool): HubListedTool {
  return {
    ...tool,
    name: `${deviceId}.${tool.name}`,
    title: `${tool.title ?? tool.name} (${deviceId})`,
    description: `On device ${deviceId}: ${tool.description ?? tool.name}`,
    _meta: { 'lookout/device_id': deviceId, 'lookout/tool': tool.name },
  };
}
