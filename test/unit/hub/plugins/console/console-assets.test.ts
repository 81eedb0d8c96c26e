/**
 * The console's assets are compressed when the page is built, not when the hub starts: at quality 11
 * the source map alone took seconds, which twice ran the console plugin past its start timeout (and
 * `/` answered 404). The hub uses a build's twin only when it decodes to the file's own bytes.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, brotliDecompressSync, gunzipSync } from 'node:zlib';
import { packageRoot } from '../../../../../core/src/paths/package-root.js';
import { loadConsoleAssets } from '../../../../../hub/plugins/console/src/console-assets.js';

const built = join(packageRoot(), 'dist', 'hub', 'plugins', 'console', 'web');

describe('console assets', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'console-assets-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the build writes a Brotli and a gzip twin of every file, and the hub serves those bytes', async () => {
    const names = await readdir(built);
    const sources = names.filter((n) => !n.endsWith('.br') && !n.endsWith('.gz'));
    assert.ok(sources.includes('index.html'));
    for (const name of sources) {
      assert.ok(names.includes(`${name}.br`), `${name}.br is built`);
      assert.ok(names.includes(`${name}.gz`), `${name}.gz is built`);
    }
    const assets = await loadConsoleAssets(built);
    assert.deepEqual([...assets.keys()].sort(), [...sources].sort(), 'the twins are not assets of their own');
    for (const asset of assets.values()) {
      assert.deepEqual(asset.br, await readFile(join(built, `${asset.name}.br`)), `${asset.name}: the built Brotli bytes`);
      assert.deepEqual(asset.gzip, await readFile(join(built, `${asset.name}.gz`)), `${asset.name}: the built gzip bytes`);
    }
  });

  it('a twin that is not the file (stale or corrupt) is replaced by one compressed at load', async () => {
    await writeFile(join(dir, 'index.html'), '<!doctype html><title>now</title>');
    await writeFile(join(dir, 'index.html.br'), brotliCompressSync(Buffer.from('<!doctype html><title>before</title>')));
    await writeFile(join(dir, 'index.html.gz'), Buffer.from('not gzip at all'));
    const asset = (await loadConsoleAssets(dir)).get('index.html')!;
    assert.equal(brotliDecompressSync(asset.br).toString(), '<!doctype html><title>now</title>');
    assert.equal(gunzipSync(asset.gzip).toString(), '<!doctype html><title>now</title>');
  });
});
