import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { api, testHub } from '../../support/hub-helpers.js';
import { scratchDir } from '../../support/scratch-dir.js';
import { testBuilder } from './builder-helpers.js';
import hubMeta from '../../../hub/plugins/hub-meta/src/index.js';
import builderProxy from '../../../hub/plugins/builder-proxy/src/index.js';
import type { Plugin } from '../../../core/src/plugin/context.js';

const HUB_TOKEN = 'hub-test-token-42';
const BUILDER_TOKEN = 'builder-test-token-7';

/** A raw request, so that a path reaches the hub exactly as written (fetch would normalise `..`). */
function rawGet(base: string, path: string, token: string): Promise<{ status: number; body: any }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('hub /api/*: passed through to the builder behind the hub token, with the builder token, typed errors and statuses as the builder answers', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  let builder = await testBuilder(dir, { token: BUILDER_TOKEN, host: '127.0.0.1' });
  t.after(() => builder.close());
  const hub = await testHub({
    token: HUB_TOKEN,
    host: '127.0.0.1',
    builderUrl: builder.url,
    bodyLimitBytes: 2048,
    env: { LOOKOUT_BUILDER_TOKEN: BUILDER_TOKEN },
    plugins: [hubMeta, builderProxy] as unknown as Plugin[],
  });
  t.after(() => hub.close());

  const anonymous = await api(hub.url, '/api/ontology');
  assert.equal(anonymous.status, 401, "the hub's own authentication is in front");
  const direct = await api(builder.url, '/api/ontology', { token: BUILDER_TOKEN });
  const viaHub = await api(hub.url, '/api/ontology', { token: HUB_TOKEN });
  assert.equal(viaHub.status, 200);
  assert.deepEqual(viaHub.body, direct.body);

  const added = await api(hub.url, '/api/ontology', { json: { classes: ['person'] }, token: HUB_TOKEN });
  assert.equal(added.status, 200);
  assert.equal((await api(builder.url, '/api/ontology', { token: BUILDER_TOKEN })).body.classes.at(-1).name, 'person');
  const compiled = await api(hub.url, '/api/ontology/compile', { json: {}, token: HUB_TOKEN });
  assert.equal(compiled.status, 201);
  await api(hub.url, '/api/ontology/classes/handgun', { method: 'DELETE', token: HUB_TOKEN });
  const refused = await api(hub.url, '/api/ontology/compile', { json: {}, token: HUB_TOKEN });
  assert.equal(refused.status, 409);
  assert.equal(refused.body.error.code, 'ontology.person_id_moved');
  const query = await api(hub.url, '/api/ontology?ontology=nope', { token: HUB_TOKEN });
  assert.equal(query.status, 404);
  assert.equal(query.body.error.code, 'ontology.ontology_unknown');
  const jobs = await api(hub.url, '/api/pipeline/jobs', { token: HUB_TOKEN });
  assert.deepEqual(jobs.body, { jobs: [] });
  const gone = await api(hub.url, '/api/datasets/none', { method: 'DELETE', token: HUB_TOKEN });
  assert.equal(gone.body.error.code, 'dataset.dataset_unknown');

  const big = await api(hub.url, '/api/ontology', { json: { classes: Array.from({ length: 600 }, (_, i) => `c${i}`) }, token: HUB_TOKEN });
  assert.equal(big.status, 413, "the hub's body bound holds before the builder");
  const traversal = await rawGet(hub.url, '/api/%2e%2e/openapi.json', HUB_TOKEN);
  assert.equal(traversal.status, 400);
  assert.equal(traversal.body.error.code, 'bad_request');

  const doc = await api(hub.url, '/openapi.json', { token: HUB_TOKEN });
  assert.ok(doc.body.paths['/api/{rest}'].post, "the hub's OpenAPI lists the pass-through");
  assert.deepEqual(doc.body.paths['/api/{rest}'].get.responses['502']['x-error-codes'], ['builder-proxy.builder_unreachable']);

  await builder.close();
  const down = await api(hub.url, '/api/ontology', { token: HUB_TOKEN });
  assert.equal(down.status, 502);
  assert.equal(down.body.error.code, 'builder-proxy.builder_unreachable');
  assert.doesNotMatch(down.text, new RegExp(BUILDER_TOKEN));
  builder = await testBuilder(dir, { token: BUILDER_TOKEN, host: '127.0.0.1', port: builder.port });
  assert.equal((await api(hub.url, '/api/ontology', { token: HUB_TOKEN })).body.classes.at(-1).name, 'person', 'the state survived the restart');
});

test('hub /api/*: without a builder configured the answer says how to set one', async (t) => {
  const hub = await testHub({ plugins: [builderProxy] as unknown as Plugin[], env: { LOOKOUT_BUILDER_URL: '' } });
  t.after(() => hub.close());
  const res = await api(hub.url, '/api/ontology');
  assert.equal(res.status, 503);
  assert.equal(res.body.error.code, 'builder-proxy.builder_not_configured');
  assert.match(res.body.error.message, /--builder-url/);
});
