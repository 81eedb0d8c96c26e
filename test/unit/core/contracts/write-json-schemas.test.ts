import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTRACT_SCHEMAS, type ContractName } from '../../../../core/src/contracts/index.js';
import { writeJsonSchemas } from '../../../../core/src/contracts/write-json-schemas.js';
import { packageRoot } from '../../../../core/src/paths/package-root.js';
import type { Plugin } from '../../../../core/src/plugin/context.js';

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lookout-schemas-'));
  dirs.push(dir);
  return dir;
}

async function readJson(file: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
}

describe('JSON Schema writer', () => {
  it('writes one parseable draft 2020-12 schema per contract and an index, without leftovers', async () => {
    const dir = await freshDir();
    const index = await writeJsonSchemas(join(dir, 'schemas'));
    const names = Object.keys(CONTRACT_SCHEMAS) as ContractName[];
    assert.deepEqual(
      index.map((e) => e.name),
      names,
    );
    const files = (await readdir(join(dir, 'schemas'))).sort();
    assert.deepEqual(files, [...names.map((n) => `${n}.schema.json`), 'error-codes.json', 'index.json'].sort());
    for (const name of names) {
      const schema = await readJson(join(dir, 'schemas', `${name}.schema.json`));
      assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema', name);
      assert.equal(schema.title, name);
      assert.equal(schema.type, 'object', name);
    }
    const idx = await readJson(join(dir, 'schemas', 'index.json'));
    assert.deepEqual(idx, { schemas: index });
  });
  it('keeps the required fields, enums, bounds and forward compatibility of the zod schemas', async () => {
    const dir = await freshDir();
    await writeJsonSchemas(dir);
    const dets = await readJson(join(dir, 'dets-message.schema.json'));
    assert.deepEqual(dets.required, ['timestamp', 'camera_id', 'dets', 'person_count', 'rf_detr_precomputed']);
    assert.deepEqual(dets.additionalProperties, {});
    const props = dets.properties as Record<string, Record<string, unknown>>;
    assert.deepEqual(props.person_count, { type: 'integer', minimum: 0, description: 'persons passing the person gate', maximum: Number.MAX_SAFE_INTEGER });
    assert.equal(props.timestamp?.format, 'date-time');
    const box = ((props.dets?.items as Record<string, unknown>).properties as Record<string, Record<string, unknown>>).b;
    assert.equal(box?.minItems, 4);
    const status = await readJson(join(dir, 'status-message.schema.json'));
    const sp = status.properties as Record<string, Record<string, unknown>>;
    // Null while unknown (no die reading yet), with thermal_state_reason beside it.
    assert.deepEqual(sp.thermal_state?.anyOf, [{ type: 'string', enum: ['NORMAL', 'THERMAL_WARN', 'THERMAL_CRITICAL'] }, { type: 'null' }]);
    assert.deepEqual(sp.state?.enum, ['online', 'offline']);
    const index = await readJson(join(dir, 'index.json'));
    const entries = index.schemas as { name: string; topics: string[] }[];
    assert.deepEqual(entries.find((e) => e.name === 'event-message')?.topics, ['events/+']);
    assert.deepEqual(entries.find((e) => e.name === 'telemetry-message')?.topics, ['telemetry']);
  });
  it("lists a plugin's own error codes in the error body's code and in error-codes.json", async () => {
    const dir = await freshDir();
    const { flaky } = (await import(join(packageRoot(), 'test', 'fixtures', 'flaky-plugin', 'index.js'))) as { flaky: Plugin };
    await writeJsonSchemas(dir, [flaky]);
    const body = await readJson(join(dir, 'error-body.schema.json'));
    const code = (body.properties as { error: { properties: { code: { enum: string[] } } } }).error.properties.code;
    assert.ok(code.enum.includes('flaky.not_ready'));
    assert.ok(code.enum.includes('plugin_start_failed'));
    const table = (await readJson(join(dir, 'error-codes.json'))).codes as { code: string; status: number; plugin?: string }[];
    assert.deepEqual(
      table.find((e) => e.code === 'flaky.not_ready'),
      { code: 'flaky.not_ready', status: 503, message: 'the flaky plugin was started before its ready file existed', plugin: 'flaky' },
    );
  });
  it('rewrites files in place on a second run', async () => {
    const dir = await freshDir();
    await writeJsonSchemas(dir);
    const first = await readFile(join(dir, 'hello-message.schema.json'), 'utf8');
    await writeJsonSchemas(dir);
    assert.equal(await readFile(join(dir, 'hello-message.schema.json'), 'utf8'), first);
    assert.equal((await readdir(dir)).filter((f) => f.endsWith('.tmp')).length, 0);
  });
});
