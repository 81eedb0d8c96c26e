import { z } from 'zod';
import { definePlugin } from '../../../../core/src/plugin/context.js';
import { ToolCallRequestSchema, ToolCallResponseSchema } from '../../../../core/src/contracts/tool-call.js';
import { HealthEnrichmentSchema } from '../../../../core/src/contracts/health-enrichment.js';
import { toLookoutError } from '../../../../core/src/errors/lookout-error.js';
import { packageVersion } from '../../../../core/src/paths/package-root.js';
import { HUB_METRICS } from '../../../src/hub-tokens.js';
import type { HubMetrics } from '../../../src/hub-metrics.js';
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
  dependsOn: ['registry', 'debug-ring'],
  config: z.object({
    LOOKOUT_HUB_TOOL_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(15_000),
  }),
  routes: [{ method: 'POST', path: '/tools/call', summary: 'Call a tool on a registered device: {tool, arguments} → {tool, target, status, result}', query: CallQuery, body: ToolCallRequestSchema, response: CallResponse }],
  start(ctx) {
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const ring = ctx.services.get(DEBUG_RING);
    const metrics = ctx.container.isRegistered(HUB_METRICS.name, true) ? ctx.container.resolve<HubMetrics>(HUB_METRICS.name) : undefined;
    const pool = new McpClientPool({ name: 'lookout-hub', version: packageVersion() });
    ctx.onStop(() => pool.close());
    const deps: ForwardDeps = { pool, timeoutMs: ctx.config.LOOKOUT_HUB_TOOL_TIMEOUT_MS, ring, ...(metrics ? { metrics } : {}) };

    ctx.routes.handle<z.output<typeof CallQuery>, z.output<typeof ToolCallRequestSchema>>('POST', '/tools/call', async ({ query, body, signal }) => {
      const device = registry.resolve(query.target);
      const call = (tool: string, args: Record<string, unknown>) => forwardCall(deps, device, tool, args, signal);
      const base = { tool: body.tool, target: query.target, device_id: device.deviceId };
      if (!ENRICHED_TOOLS.has(body.tool)) {
        const outcome = await call(body.tool, body.arguments);
        return outcome.status === 'ok' ? { ...base, status: 'ok', result: outcome.result } : { ...base, status: 'error', result: errorResult(outcome), error: outcome.error };
      }
      // The health tool and its two helpers in parallel; a helper's failure only makes a field missing.
      const aux = (tool: string): Promise<AuxOutcome> => call(tool, {}).catch((err: unknown) => ({ status: 'failed' as const, error: toLookoutError(err).message }));
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
