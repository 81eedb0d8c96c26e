import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { LookoutError, toLookoutError, type Logger } from 'lookout/core';
import type { HubRouteCatalog } from 'lookout/hub';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { DeviceRegistry } from '../../registry/src/service.js';
import type { DeviceTools } from '../../tools-proxy/src/service.js';
import { CARD_TEMPLATE, listCards, readCard } from './device-cards.js';
import type { DeviceToolCatalog } from './device-tools.js';
import { FLEET_TOOLS, type FleetTool } from './fleet-tools.js';
import { withProgress } from './progress.js';
import { callSources } from './sources.js';
import { errorOf, failureResult, imagesOf, successResult, type HubToolResult } from './tool-results.js';

export interface HubMcpDeps {
  registry: DeviceRegistry;
  cache: BusCache;
  routes: HubRouteCatalog;
  tools: DeviceTools;
  catalog: DeviceToolCatalog;
  log: Logger;
  info: { name: string; version: string };
  /** Between two progress notifications of a call whose client sent a progress token. */
  progressIntervalMs: number;
  /** Devices whose tools one tools/list page holds. */
  toolsPageDevices: number;
}

/** Failures of the device's tool server (not of its tool): an execution error the caller may retry. */
const DEVICE_FAILURES = new Set(['device_unreachable', 'device_timeout', 'device_busy', 'device_auth_refused', 'device_tls_mismatch', 'target_not_allowed']);

const FLEET_BY_NAME = new Map(FLEET_TOOLS.map((t) => [t.name, t]));
/** Built once: the fleet tools' JSON Schemas do not change while the hub runs. */
let fleetListings: ReturnType<typeof fleetListing>[] | undefined;

/**
 * The hub's MCP server: the fleet tools (FLEET_TOOLS), every device tool as `<device>.<tool>`
 * through the tools-proxy service (its per-device limits, timeouts, credential and ring records),
 * and a card per device as a resource. Bad input (an unknown tool or device, arguments a fleet tool
 * refuses, an unknown resource) is a JSON-RPC error (-32602) whose `data.code` is the Lookout code;
 * a tool's own failure, or a device that did not answer, is an error result (`isError`).
 */
export function createHubMcpServer(deps: HubMcpDeps): Server {
  const server = new Server(deps.info, {
    capabilities: { tools: {}, resources: {} },
    instructions:
      'Lookout fleet hub. Fleet tools (no dot in their names) answer from the hub; `<device>.<tool>` runs that device’s own tool. Counts come from the devices: every answer says in `sources` (or `_meta["lookout/sources"]`) from which devices and time span.',
  });
  server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    let after: string | undefined;
    try {
      after = request.params?.cursor === undefined ? undefined : cursorDevice(request.params.cursor);
    } catch (err) {
      throw invalidParams(toLookoutError(err));
    }
    const { tools, unlisted, next } = await deps.catalog.list(extra.signal, { after, devices: deps.toolsPageDevices });
    return {
      // The fleet tools open the first page only.
      tools: after === undefined ? [...(fleetListings ??= FLEET_TOOLS.map(fleetListing)), ...tools] : tools,
      ...(next !== undefined ? { nextCursor: Buffer.from(JSON.stringify({ after: next })).toString('base64url') } : {}),
      ...(unlisted.length > 0 ? { _meta: { 'lookout/unlisted': unlisted } } : {}),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    const fleet = FLEET_BY_NAME.get(name);
    const run = fleet ? () => callFleetTool(fleet, args, deps, extra.signal) : () => callDeviceTool(name, args, deps, extra.signal);
    return withProgress(extra, deps.progressIntervalMs, name, run);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: listCards(deps.registry) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{ uriTemplate: CARD_TEMPLATE, name: 'device-card', title: 'Device card', mimeType: 'application/json' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    try {
      return { contents: [await readCard(request.params.uri, deps, extra.signal)] };
    } catch (err) {
      throw invalidParams(toLookoutError(err));
    }
  });
  return server;
}

/** The device a tools/list cursor continues after: the cursor is opaque to clients, and one the hub did not write is -32602. */
function cursorDevice(cursor: string): string {
  let after: unknown;
  try {
    after = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown }).after;
  } catch {
    after = undefined;
  }
  if (typeof after !== 'string' || after.length === 0 || after.length > 256) {
    throw new LookoutError('argument_invalid', 'tools/list: the cursor is not one this hub gave (start again without a cursor)', {
      details: { field: 'cursor' },
    });
  }
  return after;
}

function fleetListing(tool: FleetTool) {
  const schema = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
  delete schema.$schema;
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: { ...schema, type: 'object' as const },
    annotations: { title: tool.title, readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  };
}

async function callFleetTool(tool: FleetTool, args: Record<string, unknown>, deps: HubMcpDeps, signal: AbortSignal): Promise<HubToolResult> {
  const parsed = tool.input.strict().safeParse(args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || 'arguments';
    throw invalidParams(
      new LookoutError('argument_invalid', `${tool.name}: ${field}: ${issue?.message ?? 'invalid'}`, { details: { tool: tool.name, field } }),
    );
  }
  try {
    const answer = await tool.run(parsed.data, deps, signal);
    return successResult(answer.structured, answer.sources, answer.images);
  } catch (err) {
    const e = toLookoutError(err);
    if (e.code === 'target_unknown' || e.code === 'argument_invalid') throw invalidParams(e);
    if (e.code === 'internal') deps.log.error({ err: e, tool: tool.name }, `fleet tool failed: ${e.message}`);
    return failureResult(errorOf(e));
  }
}

async function callDeviceTool(name: string, args: Record<string, unknown>, deps: HubMcpDeps, signal: AbortSignal): Promise<HubToolResult> {
  let target: ReturnType<DeviceToolCatalog['resolve']>;
  try {
    target = deps.catalog.resolve(name);
  } catch (err) {
    throw invalidParams(toLookoutError(err), name);
  }
  const started = Date.now();
  try {
    const outcome = await deps.tools.call(target.device, target.tool, args, signal);
    const sources = callSources(target.device.deviceId, started, Date.now());
    if (outcome.status === 'error') return failureResult({ code: outcome.code ?? 'tool_failed', message: outcome.error }, sources);
    return successResult(outcome.result, sources, imagesOf(outcome.result));
  } catch (err) {
    const e = toLookoutError(err);
    if (e.code === 'tool_not_found') throw invalidParams(e, name);
    if (DEVICE_FAILURES.has(e.code)) return failureResult(errorOf(e), callSources(target.device.deviceId, started, Date.now()));
    throw e;
  }
}

/**
 * A JSON-RPC error the SDK answers with this code, message and data (not McpError, whose message
 * carries an "MCP error <code>:" prefix clients then print twice), as the device tool server does.
 */
function invalidParams(e: LookoutError, tool?: string): Error {
  return Object.assign(new Error(e.message), { code: ErrorCode.InvalidParams, data: { code: e.code, ...(tool ? { tool } : {}) } });
}
