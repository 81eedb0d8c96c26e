import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { DeviceIdSchema } from 'lookout/core/contracts';
import { LookoutError, definePlugin, reply, type RouteRequest, DEVICE_CALL_ERRORS } from 'lookout/core';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { DEVICE_TOOLS } from '../../tools-proxy/src/service.js';
import { encodedBody, loadConsoleAssets, type ConsoleAsset } from './console-assets.js';

const ToolsQuery = z.object({
  target: z.string().min(1).max(256).describe('device id, device address or label'),
});

const ToolsResponse = z.object({
  target: z.string(),
  device_id: DeviceIdSchema,
  tools: z
    .array(z.looseObject({ name: z.string(), description: z.string().optional(), inputSchema: z.looseObject({}) }))
    .describe('the device’s tools/list: names, descriptions, input JSON Schemas and annotations'),
});

/**
 * The page itself: no secret in it, and a browser cannot send a bearer token when it navigates, so
 * it is public; everything it shows comes from routes that need the token. It loads nothing from
 * another origin (the Content-Security-Policy says so too).
 */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** The fleet console: the web page at `/`, its assets under `/console/`, and the device tools list its tool form reads. */
export default definePlugin({
  name: 'console',
  version: '1.0.0',
  core: '^1',
  description: 'The fleet console: a web page at / (fleet, device, live video, plots, clips, tool calls, debug tail) and GET /tools/list for its tool form',
  requires: [DEVICE_REGISTRY, DEVICE_TOOLS],
  config: z.object({
    /** Where the built page is; default the build's dist/hub/plugins/console/web. */
    LOOKOUT_CONSOLE_ASSETS_DIR: z.string().min(1).optional(),
  }),
  errors: [{ code: 'not_built', status: 503, description: 'the console page was not built (npm run build builds it)' }],
  routes: [
    { method: 'GET', path: '/', errors: ['not_built'], statuses: [304], summary: 'The fleet console (HTML page)', produces: 'text/html', public: true },
    {
      method: 'GET',
      path: '/console/:file',
      params: { file: 'a file of the built console: a content-hashed script, stylesheet or source map name' },
      errors: ['not_found'],
      statuses: [304],
      summary: 'The console’s script, stylesheet and source maps (content-hashed names, cached for a year)',
      produces: 'application/octet-stream',
      public: true,
    },
    {
      method: 'GET',
      path: '/tools/list',
      errors: [...DEVICE_CALL_ERRORS],
      summary: "A device's tools/list through the hub's MCP client: each tool's name, description, input JSON Schema and annotations",
      query: ToolsQuery,
      response: ToolsResponse,
    },
  ],
  async start(ctx) {
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const tools = ctx.services.get(DEVICE_TOOLS);
    const dir = ctx.config.LOOKOUT_CONSOLE_ASSETS_DIR ?? fileURLToPath(new URL('../web/', import.meta.url));
    const assets = await loadConsoleAssets(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      return new Map<string, ConsoleAsset>();
    });
    if (!assets.has('index.html')) {
      ctx.health.set('degraded', `the console page is not built in ${dir}: npm run build builds it`);
      ctx.log.warn({ dir }, 'the console page is not built: GET / answers 503 until npm run build');
    }

    const serve = (asset: ConsoleAsset | undefined, req: RouteRequest, headers: Record<string, string>) => {
      if (!asset) throw new LookoutError('not_found', 'no such console file', { details: { file: req.params.file ?? '' } });
      const common = {
        ETag: asset.etag,
        'Cache-Control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        // The same ETag for every encoding: the encoded bytes are a function of the file's.
        ...headers,
      };
      const inm = req.headers['if-none-match'];
      if (typeof inm === 'string' && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === asset.etag)) {
        return reply({ status: 304, body: null, headers: common });
      }
      const accept = req.headers['accept-encoding'];
      const { body, encoding } = encodedBody(asset, Array.isArray(accept) ? accept.join(',') : accept);
      return reply({
        status: 200,
        body,
        type: asset.type,
        headers: { ...common, Vary: 'Accept-Encoding', ...(encoding ? { 'Content-Encoding': encoding } : {}) },
      });
    };

    ctx.routes.handle('GET', '/', (req) => {
      const page = assets.get('index.html');
      if (!page) throw new LookoutError('console.not_built', `the console page is not built (${dir} has no index.html): run npm run build`);
      return serve(page, req, PAGE_HEADERS);
    });
    ctx.routes.handle('GET', '/console/:file', (req) => {
      const file = req.params.file ?? '';
      return serve(file === 'index.html' ? undefined : assets.get(file), req, {});
    });
    ctx.routes.handle<z.output<typeof ToolsQuery>>('GET', '/tools/list', async ({ query, signal }) => {
      const device = registry.resolve(query.target);
      const list = await tools.listTools(device, signal);
      return { target: query.target, device_id: device.deviceId, tools: list };
    });
  },
});
