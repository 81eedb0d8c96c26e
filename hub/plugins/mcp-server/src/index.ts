import { z } from 'zod';
import { definePlugin, packageVersion } from 'lookout/core';
import { HUB_ROUTES } from 'lookout/hub';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { DEVICE_TOOLS } from '../../tools-proxy/src/service.js';
import { DeviceToolCatalog } from './device-tools.js';
import { createHubMcpServer } from './hub-mcp-server.js';
import { serveMcpPost } from './mcp-http.js';

const JsonRpcMessage = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    method: z.string().optional().describe('initialize, ping, tools/list, tools/call, resources/list, resources/read, …'),
    id: z.union([z.string(), z.number()]).optional().describe('absent for a notification (answered 202)'),
    params: z.looseObject({}).optional(),
  })
  .describe('one JSON-RPC 2.0 message of the Model Context Protocol (2025-11-25)');

/**
 * POST /mcp: the hub as an MCP server (streamable HTTP, stateless) for agents: the fleet's tools,
 * every device's tools as `<device>.<tool>` through the tools-proxy, device cards as resources.
 * Behind the hub's own rules (token, Host, Origin) like every route, and the per-device call limits
 * of the tools-proxy.
 */
export default definePlugin({
  name: 'mcp-server',
  version: '1.0.0',
  core: '^1',
  description: 'The hub as a Model Context Protocol server (POST /mcp): fleet tools, <device>.<tool> for every device tool, device cards',
  requires: [DEVICE_REGISTRY, BUS_CACHE, DEVICE_TOOLS, HUB_ROUTES],
  config: z.object({
    /** How long a device's tools/list answer serves the hub's tools/list. */
    LOOKOUT_HUB_MCP_TOOLS_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
    /** Devices asked for their tools at once by a tools/list. */
    LOOKOUT_HUB_MCP_LIST_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
    /** Devices whose tools one tools/list page holds (the page's nextCursor leads on). */
    LOOKOUT_HUB_MCP_TOOLS_PAGE_DEVICES: z.coerce.number().int().min(1).max(10_000).default(100),
    /** Between two progress notifications of a call whose client sent a progress token. */
    LOOKOUT_HUB_MCP_PROGRESS_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  }),
  routes: [
    {
      method: 'POST',
      path: '/mcp',
      summary: 'Model Context Protocol (streamable HTTP, stateless): fleet tools, <device>.<tool>, device cards (resources)',
      description:
        'One JSON-RPC message per POST; Accept must name application/json and text/event-stream (else 406). Requests are answered as an SSE stream (progress notifications, then the result); notifications with 202. A body that is not JSON is a JSON-RPC parse error (-32700); an unknown tool or device, or arguments a fleet tool refuses, is -32602 with `data.code`.',
      errors: ['bad_request', 'payload_too_large', 'unsupported_media_type'],
      statuses: [202],
      body: JsonRpcMessage,
      rawBody: true,
      // MCP transports: a local server accepts localhost, 127.0.0.1 and [::1] origins (an inspector on a port of its own).
      localOrigins: true,
      produces: 'text/event-stream',
    },
  ],
  start(ctx) {
    const c = ctx.config;
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const tools = ctx.services.get(DEVICE_TOOLS);
    const catalog = new DeviceToolCatalog({ registry, tools, ttlMs: c.LOOKOUT_HUB_MCP_TOOLS_TTL_MS, concurrency: c.LOOKOUT_HUB_MCP_LIST_CONCURRENCY });
    const deps = {
      registry,
      cache: ctx.services.get(BUS_CACHE),
      routes: ctx.services.get(HUB_ROUTES),
      tools,
      catalog,
      log: ctx.log,
      info: { name: 'lookout-hub', version: packageVersion() },
      progressIntervalMs: c.LOOKOUT_HUB_MCP_PROGRESS_MS,
      toolsPageDevices: c.LOOKOUT_HUB_MCP_TOOLS_PAGE_DEVICES,
    };
    ctx.routes.handle('POST', '/mcp', (req) => serveMcpPost(req, () => createHubMcpServer(deps)));
  },
});
