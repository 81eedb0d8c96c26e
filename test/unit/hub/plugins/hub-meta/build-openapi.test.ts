import assert from 'node:assert/strict';
import { test } from 'node:test';
import { definePlugin, type Plugin } from '../../../../../core/src/plugin/context.js';
import { loadHubPluginSet } from '../../../../../hub/src/hub-plugin-set.js';
import { LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { api, testHub } from '../../../../integration/hub-helpers.js';

/** A third-party hub plugin with a code of its own, answered by one of its routes. */
const quota: Plugin = definePlugin({
  name: 'quota-guard',
  version: '1.0.0',
  core: '^1',
  errors: [{ code: 'quota_exceeded', status: 429, description: 'the fleet used its daily snapshot quota' }],
  routes: [{ method: 'GET', path: '/quota', summary: 'Always over quota' }],
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
    const answer = await api(hub.url, '/quota');
    assert.equal(answer.status, 429);
    assert.deepEqual(answer.body, { error: { code: 'quota-guard.quota_exceeded', message: 'no snapshots left today' } });
  } finally {
    await hub.close();
  }
});
