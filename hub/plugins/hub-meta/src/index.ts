import { z } from 'zod';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HUB_INFO, HUB_METRICS, HUB_ROUTES } from 'lookout/hub';
import { definePlugin, packageRoot, reply } from 'lookout/core';
import { buildOpenApi } from './build-openapi.js';

const HealthResponse = z.object({
  status: z.literal('ok'),
  service: z.literal('lookout-hub'),
  version: z.string(),
  uptime_s: z.number(),
  bus_connected: z.boolean(),
});

/** The hub's own surface: liveness, the OpenAPI document of every declared route, Prometheus metrics. */
export default definePlugin({
  name: 'hub-meta',
  version: '1.0.0',
  core: '^1',
  description: 'Liveness (GET /health), OpenAPI 3.1 (GET /openapi.json), Prometheus metrics (GET /metrics)',
  requires: [HUB_INFO, HUB_ROUTES, HUB_METRICS],
  routes: [
    { method: 'GET', path: '/health', summary: 'Hub liveness (cheap; no token needed)', response: HealthResponse, public: true },
    {
      method: 'GET',
      path: '/openapi.json',
      summary: 'OpenAPI 3.1 document generated from the hub plugins\u2019 route manifests',
      response: z.looseObject({ openapi: z.string(), paths: z.looseObject({}) }),
    },
    {
      method: 'GET',
      path: '/metrics',
      summary: 'Prometheus metrics: ingest, invalid messages by topic, route latency, tool calls',
      produces: 'text/plain; version=0.0.4',
    },
  ],
  start(ctx) {
    const info = ctx.services.get(HUB_INFO);
    const routes = ctx.services.get(HUB_ROUTES);
    const metrics = ctx.services.get(HUB_METRICS);
    ctx.routes.handle('GET', '/health', () => ({
      status: 'ok',
      service: 'lookout-hub',
      version: info.version,
      uptime_s: Math.round((Date.now() - info.startedAt) / 1000),
      bus_connected: info.bus.connected,
    }));
    let cached: { count: number; doc: unknown } | undefined;
    ctx.routes.handle('GET', '/openapi.json', () => {
      // Routes only change when plugins load or stop; rebuild when their number changes.
      const list = routes.list();
      if (!cached || cached.count !== list.length) {
        cached = {
          count: list.length,
          doc: buildOpenApi(list, routes.errorCodes(), {
            title: 'Lookout hub',
            version: info.version,
            license: packageLicense(),
            tokenRequired: info.tokenRequired,
            plugins: routes.pluginDescriptions(),
            ...(info.httpUrl ? { serverUrl: info.httpUrl } : {}),
          }),
        };
      }
      return cached.doc;
    });
    ctx.routes.handle('GET', '/metrics', async () => {
      const { body, contentType } = await metrics.text();
      return reply({ status: 200, body, type: contentType });
    });
  },
});

/** The SPDX license of the package (package.json), so the document says what the code is licensed under. */
function packageLicense(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { license: string }).license;
}
