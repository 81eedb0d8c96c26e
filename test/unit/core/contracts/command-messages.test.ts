import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTRACT_SCHEMAS, PingCommandSchema, ToolCommandSchema } from '../../../../core/src/contracts/index.js';
import { writeJsonSchemas } from '../../../../core/src/contracts/write-json-schemas.js';

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('inbound command contracts (cmd/tool, cmd/ping)', () => {
  it('are strict: a misspelt field is refused, arguments default to an empty object', () => {
    assert.deepEqual(ToolCommandSchema.parse({ tool: 'get_system_health' }), { tool: 'get_system_health', arguments: {} });
    assert.equal(ToolCommandSchema.safeParse({ tool: 'x', argument: {} }).success, false);
    assert.equal(ToolCommandSchema.safeParse({ tool: '', arguments: {} }).success, false);
    assert.equal(ToolCommandSchema.safeParse({ tool: 'x', arguments: 5 }).success, false);
    assert.equal(PingCommandSchema.safeParse({ request_id: 'r1' }).success, true);
    assert.equal(PingCommandSchema.safeParse({ ping: true }).success, false);
  });

  it('are written as JSON Schemas with the other contracts, indexed under their topics', async () => {
    // Before: the payloads the device accepts on cmd/tool and cmd/ping had no published schema.
    assert.equal(CONTRACT_SCHEMAS['tool-command'], ToolCommandSchema);
    assert.equal(CONTRACT_SCHEMAS['ping-command'], PingCommandSchema);
    const dir = await mkdtemp(join(tmpdir(), 'lookout-cmd-schemas-'));
    dirs.push(dir);
    await writeJsonSchemas(dir);
    const tool = JSON.parse(await readFile(join(dir, 'tool-command.schema.json'), 'utf8')) as Record<string, any>;
    assert.deepEqual(tool.required, ['tool', 'arguments']);
    assert.equal(tool.additionalProperties, false);
    assert.equal(tool.properties.tool.maxLength, 100);
    const ping = JSON.parse(await readFile(join(dir, 'ping-command.schema.json'), 'utf8')) as Record<string, any>;
    assert.equal(ping.additionalProperties, false);
    const index = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as { schemas: { name: string; topics: string[] }[] };
    assert.deepEqual(index.schemas.find((e) => e.name === 'tool-command')?.topics, ['cmd/tool']);
    assert.deepEqual(index.schemas.find((e) => e.name === 'ping-command')?.topics, ['cmd/ping']);
  });
});
