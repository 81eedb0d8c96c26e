import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLogger } from '../../../../core/src/log/logger.js';
import { FileStateStore } from '../../../../hub/src/state/file-state-store.js';

const logger = createLogger({ level: 'silent' });
const asObject = (raw: unknown) => {
  if (typeof raw !== 'object' || raw === null) throw new Error('not an object');
  return raw as Record<string, unknown>;
};

describe('FileStateStore', () => {
  it('saves a kept key once per interval while it changes, and at close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-state-'));
    const store = new FileStateStore({ dir, logger, intervalMs: 50 });
    let snapshots = 0;
    let n = 0;
    const keeper = store.keep('thing', () => {
      snapshots++;
      return { n };
    });
    for (n = 1; n <= 20; n++) keeper.changed();
    n = 20;
    assert.equal(snapshots, 0, 'nothing is written at once');
    await new Promise((r) => setTimeout(r, 120));
    assert.equal(snapshots, 1, 'twenty changes, one write');
    n = 21;
    keeper.changed();
    await store.close();
    assert.equal(snapshots, 2, 'the change pending at close is written');
    assert.deepEqual((await new FileStateStore({ dir, logger }).load('thing', asObject)).value, { n: 21 });
    assert.deepEqual(readdirSync(dir), ['thing.json'], 'no temp file left behind');
  });

  it('sets aside a truncated file, a file of another shape and one over the bound, and loads nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-state-'));
    const store = new FileStateStore({ dir, logger, maxBytes: 1024 });
    writeFileSync(join(dir, 'cut.json'), '{"format":"lookout-hub-state/1","key":"cut","val');
    const cut = await store.load('cut', asObject);
    assert.equal(cut.value, undefined);
    assert.match(cut.warning ?? '', /not restored.*set aside/);

    writeFileSync(join(dir, 'shape.json'), JSON.stringify({ format: 'lookout-hub-state/1', key: 'shape', value: 7 }));
    assert.match((await store.load('shape', asObject)).warning ?? '', /not an object/);

    writeFileSync(join(dir, 'big.json'), JSON.stringify({ format: 'lookout-hub-state/1', key: 'big', value: { s: 'x'.repeat(2000) } }));
    assert.match((await store.load('big', asObject)).warning ?? '', /over the bound of 1024/);

    const names = readdirSync(dir).sort();
    assert.equal(names.length, 3);
    for (const key of ['big', 'cut', 'shape'])
      assert.ok(
        names.some((f) => f.startsWith(`${key}.json.corrupt-`)),
        names.join(', '),
      );
    assert.deepEqual(await store.load('absent', asObject), {});
  });

  it('refuses to save a value over the bound and keeps the previous file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-state-'));
    const store = new FileStateStore({ dir, logger, maxBytes: 1024, intervalMs: 10 });
    let value: unknown = { small: true };
    const keeper = store.keep('bounded', () => value);
    keeper.changed();
    await keeper.flush();
    value = { s: 'x'.repeat(4000) };
    keeper.changed();
    await keeper.flush();
    await store.close();
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'bounded.json'), 'utf8')).value, { small: true });
  });
});
