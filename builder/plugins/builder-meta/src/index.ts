import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definePlugin, packageRoot, z } from 'lookout/core';
import { HUB_ROUTES } from 'lookout/hub';
import { buildOpenApi } from 'lookout/hub-plugins/hub-meta';
import { BUILDER_INFO } from './service.js';

const HealthResponse = z.object({ status: z.literal('ok'), service: z.literal('lookout-builder'), version: z.string(), uptime_s: z.number() });

/** The builder's own surface: liveness and the OpenAPI document of every route its stage plugins declare. */
export default definePlugin({
  name: 'builder-meta',
  version: '1.0.0',
  core: '^1',
  description: 'Builder liveness (GET /api/health) and OpenAPI 3.1 (GET /api/openapi.json)',
  requires: [BUILDER_INFO, HUB_ROUTES],
  routes: [
    { method: 'GET', path: '/api/health', summary: 'Builder liveness (no token needed)', response: HealthResponse, public: true },
    {
      method: 'GET',
      path: '/api/openapi.json',
      summary: 'OpenAPI 3.1 document generated from the builder plugins’ route manifests',
      response: z.looseObject({ openapi: z.string(), paths: z.looseObject({}) }),
    },
  ],
  start(ctx) {
    const info = ctx.services.get(BUILDER_INFO);
    const routes = ctx.services.get(HUB_ROUTES);
    ctx.routes.handle('GET', '/api/health', () => ({
      status: 'ok',
      service: 'lookout-builder',
      version: info.version,
      uptime_s: Math.round((Date.now() - info.startedAt) / 1000),
    }));
    let cached: { count: number; doc: unknown } | undefined;
    ctx.routes.handle('GET', '/api/openapi.json', () => {
      const list = routes.list();
      if (!cached || cached.count !== list.length) {
        const license = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { license: string }).license;
        cached = {
          count: list.length,
          doc: buildOpenApi(list, routes.errorCodes(), {
            title: 'Lookout builder',
            version: info.version,
            license,
            tokenRequired: info.tokenRequired,
            description:
              'Lookout builder: ontology, dataset, training, compile and deploy of detector models (spec 02). The hub serves the same paths under /api/*.',
            plugins: routes.pluginDescriptions(),
            ...(info.httpUrl ? { serverUrl: info.httpUrl } : {}),
          }),
        };
      }
      return cached.doc;
    });
  },
});
