import { serviceToken, type LookoutError } from 'lookout/core';
import type { Enrichment } from './health-enrichment.js';
import type { ListedTool } from './mcp-pool.js';
import type { RegisteredDevice } from '../../registry/src/service.js';

/** What one tool call on a device came to when the device answered: its result, or its own failure. */
export type DeviceToolOutcome = { status: 'ok'; result: unknown } | { status: 'error'; error: string; code?: string };

/**
 * Answers a tool when the device's tool server cannot (unreachable, timed out): e.g. chunk listings
 * from an SSH discovery, normalised to the tool's own result shape and marked as such. Rejecting
 * gives the caller the tool server's failure, with the fallback's in its details.
 */
export type ToolFallback = (device: RegisteredDevice, args: Record<string, unknown>, signal: AbortSignal, cause: LookoutError) => Promise<unknown>;

/** A health tool's answer with the hub's enrichment fields (spec 01) at the top and in `result`, or the device's own failure. */
export type EnrichedOutcome = ({ status: 'ok'; result: unknown } & Enrichment) | { status: 'error'; error: string; code?: string };

/** Device tool calls for other hub plugins: the same limits, timeouts, metrics and ring records as POST /tools/call. */
export interface DeviceTools {
  /** Rejects with device_unreachable, device_timeout, device_busy, tool_not_found… when the device did not answer. */
  call(device: RegisteredDevice, tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<DeviceToolOutcome>;
  /**
   * get_system_health (or get_device_health) enriched as POST /tools/call answers it: what the
   * readiness checks read. Rejects as `call` does when the device did not answer at all.
   */
  enrichedHealth(device: RegisteredDevice, signal: AbortSignal, tool?: 'get_system_health' | 'get_device_health'): Promise<EnrichedOutcome>;
  /** The device's tools/list (names, descriptions, input JSON Schemas, annotations), within the hub's tool timeout. */
  listTools(device: RegisteredDevice, signal: AbortSignal): Promise<ListedTool[]>;
  /** Registers the fallback of a tool; returns its removal. */
  addFallback(tool: string, fallback: ToolFallback): () => void;
}

export type { ListedTool };

export const DEVICE_TOOLS = serviceToken<DeviceTools>('device-tools');
