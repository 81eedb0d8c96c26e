import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../../support/hub-helpers.js';
import { scratchDir } from '../../support/scratch-dir.js';
import { testBuilder } from './builder-helpers.js';

test('ontology: the weapons default, classes added and removed by name, compiled to labels.json; all of it survives a restart', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  let builder = await testBuilder(dir);
  t.after(() => builder.close());

  const initial = await api(builder.url, '/api/ontology');
  assert.equal(initial.status, 200);
  assert.deepEqual(
    initial.body.classes.map((c: any) => [c.id, c.name]),
    [
      [0, 'handgun'],
      [1, 'rifle'],
      [2, 'knife'],
      [3, 'backpack'],
    ],
  );

  const added = await api(builder.url, '/api/ontology', { json: { classes: ['person', 'shotgun'] } });
  assert.equal(added.status, 200);
  assert.deepEqual(
    added.body.classes.map((c: any) => c.name),
    ['handgun', 'rifle', 'knife', 'backpack', 'person', 'shotgun'],
  );
  const clash = await api(builder.url, '/api/ontology', { json: { classes: ['knife'] } });
  assert.equal(clash.status, 409);
  assert.equal(clash.body.error.code, 'ontology.class_exists');
  assert.match(clash.body.error.message, /knife/);

  const removed = await api(builder.url, '/api/ontology/classes/shotgun', { method: 'DELETE' });
  assert.equal(removed.status, 200);
  assert.deepEqual(
    removed.body.classes.map((c: any) => c.name),
    ['handgun', 'rifle', 'knife', 'backpack', 'person'],
  );
  const missing = await api(builder.url, '/api/ontology/classes/shotgun', { method: 'DELETE' });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'ontology.class_unknown');

  const compiled = await api(builder.url, '/api/ontology/compile', { json: {} });
  assert.equal(compiled.status, 201);
  assert.equal(compiled.body.version, 'v1');
  assert.deepEqual(compiled.body.classes, ['handgun', 'rifle', 'knife', 'backpack', 'person']);
  assert.match(compiled.body.ontology_hash, /^sha256:[0-9a-f]{64}$/);
  // Each class the production head names maps to its id: the detector loads a custom head only with it.
  assert.deepEqual(compiled.body.remap, { '0': 10, '1': 12, '2': 11, '3': 6, '4': 0 });

  const config = await api(builder.url, '/api/ontology/config');
  assert.deepEqual(config.body, { name: 'default', class_map: 'custom', classes: ['handgun', 'rifle', 'knife', 'backpack', 'person'] });

  await builder.close();
  builder = await testBuilder(dir);
  const after = await api(builder.url, '/api/ontology/labels');
  assert.equal(after.status, 200);
  assert.deepEqual(after.body, compiled.body);
  const view = await api(builder.url, '/api/ontology');
  assert.equal(view.body.person_id_expected, 4);
  assert.deepEqual(
    view.body.versions.map((v: any) => v.version),
    ['v1'],
  );
});

test('ontology: the content hash depends on the classes alone, and a compile of the same classes gives the same version', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  const builder = await testBuilder(dir);
  t.after(() => builder.close());

  const a = await api(builder.url, '/api/ontology/compile', { json: {} });
  const again = await api(builder.url, '/api/ontology/compile', { json: {} });
  assert.equal(again.status, 200, 'nothing new to compile');
  assert.equal(again.body.version, a.body.version);
  assert.equal(again.body.ontology_hash, a.body.ontology_hash);

  // The same classes in another ontology, compiled later: the same hash.
  const other = await api(builder.url, '/api/ontology/compile', { json: { config: { name: 'copy', classes: ['handgun', 'rifle', 'knife', 'backpack'] } } });
  assert.equal(other.status, 201);
  assert.equal(other.body.ontology_hash, a.body.ontology_hash);

  // Another order is another class list: another hash, and a new version.
  await api(builder.url, '/api/ontology/classes/handgun?ontology=copy', { method: 'DELETE' });
  await api(builder.url, '/api/ontology', { json: { ontology: 'copy', classes: ['handgun'] } });
  const reordered = await api(builder.url, '/api/ontology/compile', { json: { ontology: 'copy' } });
  assert.equal(reordered.status, 201);
  assert.equal(reordered.body.version, 'v2');
  assert.notEqual(reordered.body.ontology_hash, a.body.ontology_hash);
  const v1 = await api(builder.url, '/api/ontology/labels?ontology=copy&version=v1');
  assert.equal(v1.body.ontology_hash, a.body.ontology_hash, 'older versions stay readable');
});

test('ontology: the spec class maps import, and a compile that moves person off the id the remap expects is refused naming the class', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  const builder = await testBuilder(dir);
  t.after(() => builder.close());

  const omni = await api(builder.url, '/api/ontology/import', { json: { map: 'omni15' } });
  assert.equal(omni.status, 200);
  assert.equal(omni.body.classes.length, 15);
  assert.deepEqual(omni.body.classes[8], { id: 8, name: 'person' });
  assert.equal(omni.body.person_id_expected, 8);
  const labels = await api(builder.url, '/api/ontology/compile', { json: { ontology: 'omni15' } });
  assert.equal(labels.status, 201);
  assert.equal(labels.body.class_map, 'omni15');
  // The spec's Omni remap: person 8 → 0, handgun 0 → gun 10, rifle 1 → 12, knife 2 → 11.
  assert.equal(labels.body.remap['8'], 0);
  assert.equal(labels.body.remap['0'], 10);
  assert.equal(labels.body.remap['1'], 12);
  assert.equal(labels.body.remap['2'], 11);

  const production = await api(builder.url, '/api/ontology/import', { json: { map: 'production', ontology: 'prod' } });
  assert.equal(production.body.classes[0].name, 'person');
  assert.deepEqual(
    production.body.classes.slice(10).map((c: any) => c.name),
    ['gun', 'knife', 'rifle', 'shotgun'],
  );
  const prodLabels = await api(builder.url, '/api/ontology/compile', { json: { ontology: 'prod' } });
  assert.equal(prodLabels.body.remap, undefined, 'production ids need no remap');

  // Removing handgun moves every Omni class up one: person would land on 7.
  await api(builder.url, '/api/ontology/classes/handgun?ontology=omni15', { method: 'DELETE' });
  const refused = await api(builder.url, '/api/ontology/compile', { json: { ontology: 'omni15' } });
  assert.equal(refused.status, 409);
  assert.equal(refused.body.error.code, 'ontology.person_id_moved');
  assert.match(refused.body.error.message, /"person"/);
  assert.deepEqual(refused.body.error.details, { class: 'person', expected_id: 8, new_id: 7 });
  const unchanged = await api(builder.url, '/api/ontology/labels?ontology=omni15');
  assert.equal(unchanged.body.version, 'v1', 'nothing was compiled');

  // Said on purpose, it compiles with a remap that follows person.
  const meant = await api(builder.url, '/api/ontology/compile', { json: { ontology: 'omni15', person_id: 7 } });
  assert.equal(meant.status, 201);
  assert.equal(meant.body.remap['7'], 0);

  // Removing person altogether is refused the same way.
  await api(builder.url, '/api/ontology/classes/person?ontology=omni15', { method: 'DELETE' });
  const gone = await api(builder.url, '/api/ontology/compile', { json: { ontology: 'omni15' } });
  assert.equal(gone.status, 409);
  assert.equal(gone.body.error.details.new_id, null);
});

test('ontology: bad input answers typed 4xx errors, and request bodies are bounded', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  const builder = await testBuilder(dir, { bodyLimitBytes: 4096 });
  t.after(() => builder.close());

  const badName = await api(builder.url, '/api/ontology', { json: { classes: ['../etc'] } });
  assert.equal(badName.status, 400);
  assert.equal(badName.body.error.code, 'bad_request');
  assert.equal(badName.body.error.details.field, 'body.classes.0');
  const unknown = await api(builder.url, '/api/ontology?ontology=nope');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, 'ontology.ontology_unknown');
  const badMap = await api(builder.url, '/api/ontology/import', { json: { map: 'coco80' } });
  assert.equal(badMap.status, 400);
  const notJson = await api(builder.url, '/api/ontology/compile', { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } });
  assert.equal(notJson.status, 415);
  const big = await api(builder.url, '/api/ontology', { json: { classes: Array.from({ length: 600 }, (_, i) => `class_${i}`) } });
  assert.equal(big.status, 413);
  assert.equal(big.body.error.code, 'payload_too_large');
});

test('builder: a token guards every route but /api/health, and /api/openapi.json documents every route with its errors', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  const token = 'builder-test-token-1';
  const builder = await testBuilder(dir, { token, host: '127.0.0.1' });
  t.after(() => builder.close());

  assert.equal((await api(builder.url, '/api/health')).status, 200);
  const refused = await api(builder.url, '/api/ontology');
  assert.equal(refused.status, 401);
  assert.equal(refused.body.error.code, 'unauthorized');
  assert.equal((await api(builder.url, '/api/ontology', { token: 'wrong-token-123' })).status, 401);
  assert.equal((await api(builder.url, '/api/ontology', { token })).status, 200);

  const doc = await api(builder.url, '/api/openapi.json', { token });
  assert.equal(doc.status, 200);
  const routes = builder.runtime.routes.list();
  assert.ok(routes.length >= 15);
  for (const { decl } of routes) {
    const path = decl.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    assert.ok(doc.body.paths[path]?.[decl.method.toLowerCase()], `${decl.method} ${decl.path} is documented`);
  }
  const compile = doc.body.paths['/api/ontology/compile'].post;
  assert.deepEqual(compile.responses['409']['x-error-codes'].sort(), ['ontology.ontology_empty', 'ontology.person_id_moved']);
});
