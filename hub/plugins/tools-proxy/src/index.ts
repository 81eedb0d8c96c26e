import { z } from 'zod';
import { HUB_METRICS } from 'lookout/hub';
import { HealthEnrichmentSchema, ToolCallRequestSchema, ToolCallResponseSchema } from 'lookout/core/contracts';
import { LookoutError, TOOL_LIMITS, argumentBytes, definePlugin, packageVersion, toLookoutError, DEVICE_CALL_ERRORS } from 'lookout/core';
import { deviceToolToken } from 'lookout/lib/auth';
import { hubTlsPaths } from 'lookout/lib/tls';
import { fleetCaTls, poolTarget } from './device-tls.js';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_REGISTRY, type RegisteredDevice } from '../../registry/src/service.js';
import { DeclaredTools } from './declared-tools.js';
import { DeviceCallLimiter } from './device-call-limiter.js';
import { forwardCall, type ForwardDeps } from './forward-call.js';
import { isObject } from 'lookout/core';
import type { ToolOutcome } from './tool-outcome.js';
import { ENRICHED_TOOLS, enrichment, IDENTITY_TOOL, PEER_MESH_TOOL, type AuxOutcome } from './health-enrichment.js';
import { IdentityCache } from './identity-cache.js';
import { McpClientPool } from './mcp-pool.js';
import { DEVICE_TOOLS, type EnrichedOutcome, type ToolFallback } from './service.js';

const CallQuery = z.object({
  target: z.string().min(1).max(256).describe('device id, device address (ip or ip:port) or label such as "canary"'),
});

const CallResponse = ToolCallResponseSchema.extend({
  device_id: z.string(),
  fallback: z
    .boolean()
    .optional()
    .describe('true when the tool server could not answer and the hub answered from another source (an SSH discovery); the result says which'),
}).extend(HealthEnrichmentSchema.partial().shape);

/** Devices whose identity answer is kept at once (those whose health is read); the oldest go first. */
const MAX_KEPT_IDENTITIES = 10_000;

/** POST /tools/call: the hub as an MCP client of a registered device's tool server. */
export default definePlugin({
  name: 'tools-proxy',
  version: '1.0.0',
  core: '^1',
  description: 'Forwards tool calls to device tool servers (MCP over streamable HTTP), enriching health answers',
  requires: [DEVICE_REGISTRY, DEBUG_RING],
  optionalRequires: [HUB_METRICS],
  provides: [DEVICE_TOOLS],
  config: z.object({
    LOOKOUT_HUB_TOOL_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(15_000),
    /** Tool calls one device runs at once through this hub; more wait. */
    LOOKOUT_HUB_TOOL_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
    /** Tool calls that may wait for one device; past that, 429 device_busy. */
    LOOKOUT_HUB_TOOL_QUEUE: z.coerce.number().int().min(0).max(10_000).default(64),
    /** How long a device's get_device_identity answer serves health enrichment (until its next hello at most); 0: asked every time. */
    LOOKOUT_HUB_IDENTITY_CACHE_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
    /** Devices' tool tokens derive from it (HMAC-SHA256(secret, "tools:<device id>")); the hub host sets it. */
    LOOKOUT_FLEET_SECRET: z.string().min(16).optional(),
  }),
  routes: [
    {
      method: 'POST',
      path: '/tools/call',
      errors: [...DEVICE_CALL_ERRORS],
      summary: 'Call a tool on a registered device: {tool, arguments} → {tool, target, status, result}',
      query: CallQuery,
      body: ToolCallRequestSchema,
      response: CallResponse,
    },
  ],
  start(ctx) {
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const ring = ctx.services.get(DEBUG_RING);
    const metrics = ctx.services.optional(HUB_METRICS);
    const secret = ctx.config.LOOKOUT_FLEET_SECRET;
    const declared = new DeclaredTools();
    const pool = new McpClientPool({
      clientInfo: { name: 'lookout-hub', version: packageVersion() },
      ...(secret !== undefined ? { credential: (deviceId: string) => deviceToolToken(secret, deviceId) } : {}),
      onToolsListed: (_deviceId, tools) => declared.add(tools.keys()),
      // A device announcing TLS is verified against the fleet CA and its announced certificate pinned.
      tls: fleetCaTls(hubTlsPaths(ctx.runtime.dataDir).caPath),
    });
    ctx.onStop(() => pool.close());
    // The `tool` label takes only names devices declare (tools/list, or a tool a device answered
    // for), so names a client makes up share `other`.
    metrics?.setKnownTools((tool) => declared.has(tool));
    const limiter = new DeviceCallLimiter({ concurrency: ctx.config.LOOKOUT_HUB_TOOL_CONCURRENCY, maxWaiting: ctx.config.LOOKOUT_HUB_TOOL_QUEUE });
    const deps: ForwardDeps = { pool, limiter, declared, timeoutMs: ctx.config.LOOKOUT_HUB_TOOL_TIMEOUT_MS, ring, ...(metrics ? { metrics } : {}) };
    const fallbacks = new Map<string, ToolFallback>();
    const identities = new IdentityCache(ctx.config.LOOKOUT_HUB_IDENTITY_CACHE_MS, MAX_KEPT_IDENTITIES);
    /** A health tool and its two helpers in parallel; a helper's failure only makes a field missing. */
    const enrichedCall = async (device: RegisteredDevice, tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<EnrichedOutcome> => {
      // A helper the device's tools/list leaves out is not asked: it would only answer "unknown
      // tool", a whole call on the device's one event loop beside the health call (a device without
      // a peer mesh: 0.4 ms more for every health answer). Said as forwardCall says tool_not_found.
      const aux = (name: string, s: AbortSignal): Promise<AuxOutcome> =>
        pool.declares(poolTarget(device), name) === false
          ? Promise.resolve({ status: 'failed' as const, error: `${device.deviceId} has no tool named "${name}"` })
          : forwardCall(deps, device, name, {}, s).catch((err: unknown) => ({ status: 'failed' as const, error: toLookoutError(err).message }));
      const [outcome, identity, mesh] = await Promise.all([
        forwardCall(deps, device, tool, args, signal),
        // An identity call whose answer other requests share runs to its own timeout, whoever asked
        // first: on a signal of its own, never aborted (one signal for every device's call held a
        // listener per call in flight: MaxListenersExceededWarning with eleven devices at once).
        identities.get(device, (shared) => aux(IDENTITY_TOOL, shared ? new AbortController().signal : signal)),
        aux(PEER_MESH_TOOL, signal),
      ]);
      if (outcome.status === 'error') return outcome;
      const fields = enrichment(isObject(outcome.result) ? outcome.result : {}, identity, mesh, device);
      return { status: 'ok', ...fields, result: isObject(outcome.result) ? { ...outcome.result, ...fields } : outcome.result };
    };
    ctx.services.provide(DEVICE_TOOLS, {
      call: (device, tool, args, signal) => forwardCall(deps, device, tool, args, signal),
      enrichedHealth: (device, signal, tool = 'get_system_health') => enrichedCall(device, tool, {}, signal),
      listTools: (device, signal) => pool.listTools(poolTarget(device), { timeoutMs: ctx.config.LOOKOUT_HUB_TOOL_TIMEOUT_MS, signal }),
      addFallback(tool, fallback) {
        fallbacks.set(tool, fallback);
        return () => {
          if (fallbacks.get(tool) === fallback) fallbacks.delete(tool);
        };
      },
    });

    ctx.routes.handle<z.output<typeof CallQuery>, z.output<typeof ToolCallRequestSchema>>('POST', '/tools/call', async ({ query, body, signal }) => {
      checkCallSize(body);
      const device = registry.resolve(query.target);
      const call = (tool: string, args: Record<string, unknown>) => forwardCall(deps, device, tool, args, signal);
      const base = { tool: body.tool, target: query.target, device_id: device.deviceId };
      if (!ENRICHED_TOOLS.has(body.tool)) {
        const fallback = fallbacks.get(body.tool);
        const outcome: ToolOutcome & { fallback?: boolean } = fallback
          ? await withFallback(call(body.tool, body.arguments), fallback, device, body.arguments, signal)
          : await call(body.tool, body.arguments);
        return outcome.status === 'ok'
          ? { ...base, status: 'ok', result: outcome.result, ...(outcome.fallback ? { fallback: true } : {}) }
          : { ...base, status: 'error', result: null, error: errorOf(outcome) };
      }
      const enriched = await enrichedCall(device, body.tool, body.arguments, signal);
      return enriched.status === 'ok' ? { ...base, ...enriched } : { ...base, status: 'error', result: null, error: errorOf(enriched) };
    });
  },
});

/** Failures of the tool server itself (not of the tool) that a fallback may answer for. */
const FALLBACK_CODES = new Set(['device_unreachable', 'device_timeout', 'target_not_allowed']);

async function withFallback(
  primary: Promise<ToolOutcome>,
  fallback: ToolFallback,
  device: RegisteredDevice,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ToolOutcome & { fallback?: boolean }> {
  try {
    return await primary;
  } catch (err) {
    const cause = toLookoutError(err);
    if (!FALLBACK_CODES.has(cause.code)) throw cause;
    try {
      return { status: 'ok', result: await fallback(device, args, signal, cause), fallback: true };
    } catch (fallbackErr) {
      const f = toLookoutError(fallbackErr);
      throw new LookoutError(cause.code, `${cause.message}; the fallback failed too: ${f.message}`, {
        cause,
        details: { ...(isObject(cause.details) ? cause.details : {}), fallback_error: { code: f.code, message: f.message } },
      });
    }
  }
}

/**
 * The shared tool-call limits (core/src/tools/tool-limits.ts), checked before anything is sent: a
 * call the device would refuse for its size must not come back as a gateway failure.
 */
function checkCallSize(body: { tool: string; arguments: Record<string, unknown> }): void {
  if (body.tool.length > TOOL_LIMITS.maxToolNameChars || !TOOL_NAME.test(body.tool)) {
    throw new LookoutError('bad_request', `body.tool: not a tool name (letters, digits, _ . -, at most ${TOOL_LIMITS.maxToolNameChars} characters)`, {
      details: { field: 'body.tool' },
    });
  }
  const size = argumentBytes(body.arguments);
  if (size > TOOL_LIMITS.maxArgumentBytes) {
    throw new LookoutError('payload_too_large', `body.arguments: ${size} bytes of JSON, more than the ${TOOL_LIMITS.maxArgumentBytes} a tool call may carry`, {
      details: { field: 'body.arguments', limit_bytes: TOOL_LIMITS.maxArgumentBytes, bytes: size },
    });
  }
}

/** The characters MCP 2025-11-25 allows in tool names. */
const TOOL_NAME = /^[A-Za-z0-9_.-]+$/;

/** A tool's own failure in the DESIGN's error shape: the device's code when it gave one, else tool_failed. */
function errorOf(o: { error: string; code?: string }): { code: string; message: string } {
  return { code: o.code ?? 'tool_failed', message: o.error };
}
