import { z } from 'zod';
import { HUB_METRICS, HealthEnrichmentSchema, ToolCallRequestSchema, ToolCallResponseSchema, definePlugin, packageVersion, toLookoutError } from 'lookout/core';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { forwardCall, type ForwardDeps } from './forward-call.js';
import { ENRICHED_TOOLS, enrichment, IDENTITY_TOOL, PEER_MESH_TOOL, type AuxOutcome } from './health-enrichment.js';
import { McpClientPool } from './mcp-pool.js';
import { isObject } from './tool-outcome.js';

const CallQuery = z.object({
  target: z.string().min(1).max(256).describe('device id, device address (ip or ip:port) or label such as "canary"'),
});

const CallResponse = ToolCallResponseSchema.extend({ device_id: z.string() }).extend(HealthEnrichmentSchema.partial().shape);

/** POST /tools/call: the hub as an MCP client of a registered device's tool server. */
export default definePlugin({
  name: 'tools-proxy',
  version: '1.0.0',
  core: '^1',
  description: 'Forwards tool calls to device tool servers (MCP over streamable HTTP), enriching health answers',
  requires: [DEVICE_REGISTRY, DEBUG_RING],
  optionalRequires: [HUB_METRICS],
  config: z.object({
    LOOKOUT_HUB_TOOL_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(15_000),
  }),
  routes: [
    {
      method: 'POST',
      path: '/tools/call',
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
    const pool = new McpClientPool({ name: 'lookout-hub', version: packageVersion() });
    ctx.onStop(() => pool.close());
    const deps: ForwardDeps = { pool, timeoutMs: ctx.config.LOOKOUT_HUB_TOOL_TIMEOUT_MS, ring, ...(metrics ? { metrics } : {}) };

    ctx.routes.handle<z.output<typeof CallQuery>, z.output<typeof ToolCallRequestSchema>>('POST', '/tools/call', async ({ query, body, signal }) => {
      const device = registry.resolve(query.target);
      const call = (tool: string, args: Record<string, unknown>) => forwardCall(deps, device, tool, args, signal);
      const base = { tool: body.tool, target: query.target, device_id: device.deviceId };
      if (!ENRICHED_TOOLS.has(body.tool)) {
        const outcome = await call(body.tool, body.arguments);
        return outcome.status === 'ok'
          ? { ...base, status: 'ok', result: outcome.result }
          : { ...base, status: 'error', result: errorResult(outcome), error: outcome.error };
      }
      // The health tool and its two helpers in parallel; a helper's failure only makes a field missing.
      const aux = (tool: string): Promise<AuxOutcome> =>
        call(tool, {}).catch((err: unknown) => ({ status: 'failed' as const, error: toLookoutError(err).message }));
      const [outcome, identity, mesh] = await Promise.all([call(body.tool, body.arguments), aux(IDENTITY_TOOL), aux(PEER_MESH_TOOL)]);
      if (outcome.status === 'error') return { ...base, status: 'error', result: errorResult(outcome), error: outcome.error };
      const inner = isObject(outcome.result) ? outcome.result : {};
      const fields = enrichment(inner, identity, mesh, device);
      return { ...base, status: 'ok', ...fields, result: isObject(outcome.result) ? { ...outcome.result, ...fields } : outcome.result };
    });
  },
});

function errorResult(o: { error: string; code?: string }): Record<string, unknown> {
  return o.code ? { message: o.error, code: o.code } : { message: o.error };
}
