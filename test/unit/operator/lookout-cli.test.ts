import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../../core/src/paths/package-root.js';

const run = promisify(execFile);
const cli = join(packageRoot(), 'bin', 'lookout.js');

test('lookout --help lists the commands and exits 0', async () => {
  const { stdout } = await run(process.execPath, [cli, '--help']);
  assert.match(stdout, /Usage: lookout <command>/);
  assert.match(stdout, /apply-layer/);
});

test('an unknown command exits 2 with the help; a bad layer exits 1 with its code', async () => {
  await assert.rejects(
    run(process.execPath, [cli, 'frobnicate']),
    (err: { code: number; stderr: string }) => err.code === 2 && /unknown command "frobnicate"/.test(err.stderr),
  );
  await assert.rejects(
    run(process.execPath, [cli, 'apply-layer', 'layer9', '--data-dir', tmpdir()]),
    (err: { code: number; stderr: string }) => err.code === 1 && /^layer_unknown:/.test(err.stderr),
  );
});

test('apply-layer without a layer is a usage error (exit 2) naming what is missing', async () => {
  await assert.rejects(
    run(process.execPath, [cli, 'apply-layer', '--data-dir', tmpdir()]),
    (err: { code: number; stderr: string }) => err.code === 2 && /^config_invalid: apply-layer needs a layer/.test(err.stderr),
  );
});

test('an unknown option is a usage error (exit 2), as in lookout-edge', async () => {
  await assert.rejects(
    run(process.execPath, [cli, 'apply-layer', 'layer2', '--data-dri', tmpdir()]),
    (err: { code: number; stderr: string }) => err.code === 2 && /--data-dri/.test(err.stderr),
  );
});

test('lookout apply-layer writes the durable stack under the data root', async () => {
  const root = await mkdtemp(join(tmpdir(), 'lookout-cli-'));
  try {
    const { stdout } = await run(process.execPath, [cli, 'apply-layer', 'layer4_thermal', '--data-dir', root]);
    assert.equal(JSON.parse(stdout).layer, 'layer4');
    assert.match(await readFile(join(root, 'data/config/edge_v3_layer.env'), 'utf8'), /EDGE_V3_LAYER=layer4_thermal/);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
