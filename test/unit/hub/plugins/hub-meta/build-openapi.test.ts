import assert from 'node:assert/strict';
import { test } from 'node:test';
import { definePlugin, type Plugin } from '../../../../../core/src/plugin/context.js';
import { loadHubPluginSet } from '../../../../../hub/src/hub-plugin-set.js';
import { LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { registerPluginErrors } from '../../../../../core/src/errors/error-table.js';
import { RouteRegistry } from '../../../../../core/src/hub-routes/route-registry.js';
import { api, testHub } from '../../../../support/hub-helpers.js';

/** A third-party hub plugin with a code of its own, answered by one of its routes. */
const quota: Plugin = definePlugin({
  name: 'quota-guard',
  version: '1.0.0',
  core: '^1',
  errors: [{ code: 'quota_exceeded', status: 429, description: 'the fleet used its daily snapshot quota' }],
  routes: [{ method: 'GET', path: '/quota', summary: 'Always over quota', errors: ['quota_exceeded'] }],
  start(ctx) {
    ctx.routes.handle('GET', '/quota', () => {
      throw new LookoutError('quota-guard.quota_exceeded', 'no snapshots left today');
    });
  },
});

test("a third-party plugin's own error code is in the hub's OpenAPI, with its status, and is answered with it", async () => {
  const set = await loadHubPluginSet();
  const hub = await testHub({ plugins: [...set.plugins, quota], essential: set.essential });
  try {
    const doc = (await api(hub.url, '/openapi.json')).body as {
      components: { schemas: { ErrorCode: { enum: string[]; 'x-error-codes': { code: string; status: number; plugin?: string }[] }; ErrorBody: unknown } };
    };
    const codes = doc.components.schemas.ErrorCode;
    assert.ok(codes.enum.includes('quota-guard.quota_exceeded'));
    assert.ok(codes.enum.includes('plugin_start_failed'), 'the core codes are there too');
    assert.deepEqual(
      codes['x-error-codes'].find((e) => e.code === 'quota-guard.quota_exceeded'),
      {
        code: 'quota-guard.quota_exceeded',
        status: 429,
        description: 'the fleet used its daily snapshot quota',
        plugin: 'quota-guard',
      },
    );
    assert.match(JSON.stringify(doc.components.schemas.ErrorBody), /#\/components\/schemas\/ErrorCode/);
    // The route declared the code: its operation declares the status, the code listed under it.
    const quotaOp = (doc as unknown as { paths: Record<string, { get: { responses: Record<string, { 'x-error-codes'?: string[] }> } }> }).paths['/quota'].get;
    assert.deepEqual(quotaOp.responses['429']?.['x-error-codes'], ['quota-guard.quota_exceeded']);
    assert.ok(quotaOp.responses['500']?.['x-error-codes']?.includes('internal'), 'the composition adds what every route may answer');
    const answer = await api(hub.url, '/quota');
    assert.equal(answer.status, 429);
    assert.deepEqual(answer.body, { error: { code: 'quota-guard.quota_exceeded', message: 'no snapshots left today' } });
  } finally {
    await hub.close();
  }
});

test('a route that declares an error code the table does not have is refused when it is declared', () => {
  registerPluginErrors('quota-guard', [{ code: 'quota_exceeded', status: 429, description: 'over quota' }]);
  const routes = new RouteRegistry();
  // Its own code by short name, a core code and another plugin's in full are all known.
  routes.declare('quota-guard', { method: 'GET', path: '/a', summary: 'a', errors: ['quota_exceeded', 'target_unknown', 'quota-guard.quota_exceeded'] });
  assert.throws(
    () => routes.declare('quota-guard', { method: 'GET', path: '/b', summary: 'b', errors: ['target_unknwon'] }),
    (err: unknown) => err instanceof LookoutError && err.code === 'plugin_manifest_invalid' && /target_unknwon/.test(err.message),
  );
});
