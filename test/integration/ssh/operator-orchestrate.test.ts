/**
 * `lookout orchestrate` over a real OpenSSH sshd on loopback: a YAML plan's steps run per device in
 * order (each a `lookout` of its own), --prune-first and --matrix add their steps, a failing device
 * stops at its first failed step while the others go on, and the summary and exit code say so.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { writeChunks } from '../../unit/plugins/recorder/chunk-fixtures.js';
import { cleanEnv, runLookout } from '../../support/operator-helpers.js';

interface Summary {
  passed: boolean;
  steps: { device: string; layer: string | null; step: string; exit_code: number; note: string }[];
}

describe('lookout orchestrate (real sshd on loopback)', () => {
  let scratch: ScratchDir;
  let sshd: Sshd;
  let env: NodeJS.ProcessEnv;
  let root: string;
  let registry: string;
  let model: string;

  before(async () => {
    scratch = await scratchDir('operator-orch-');
    sshd = await startSshd();
    root = join(scratch.dir, 'device');
    mkdirSync(root);
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    registry = join(scratch.dir, 'registry.json');
    writeFileSync(registry, JSON.stringify({ devices: [{ device_id: 'cam-a', ips: ['127.0.0.1'], ssh_port: sshd.port }] }));
    model = join(scratch.dir, 'det.onnx');
    writeFileSync(model, randomBytes(200_000));
    env = cleanEnv({ LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts });
  });

  after(async () => {
    await sshd?.stop();
    await scratch?.cleanup();
  });

  it('runs the plan per device with --prune-first; a dead device stops at its first step and the run exits with its code', async () => {
    const recordings = join(root, 'data/recordings');
    mkdirSync(recordings, { recursive: true });
    await writeChunks(recordings, 4);
    const dead = `127.0.0.1:${await freePort()}`;
    const plan = join(scratch.dir, 'plan.yaml');
    writeFileSync(
      plan,
      [
        `devices: [cam-a, "${dead}"]`,
        `defaults: { registry: "${registry}", root: "${root}", connect-timeout-ms: 3000 }`,
        'steps:',
        `  - push-models: { files: ["${model}"] }`,
        '  - apply-layer: { layer: layer3 }',
      ].join('\n') + '\n',
    );
    const r = await runLookout(['orchestrate', '--batch', plan, '--prune-first', '--json'], { ...env, KEEP_CHUNKS: '1' }, 120_000);
    assert.equal(r.code, 5, r.stderr);
    const summary = JSON.parse(r.stdout) as Summary;
    assert.equal(summary.passed, false);
    assert.deepEqual(
      summary.steps.map((s) => `${s.device} ${s.step} ${s.exit_code}`),
      ['cam-a prune-recordings 0', 'cam-a push-models 0', 'cam-a apply-layer 0', `${dead} prune-recordings 5`],
    );
    assert.equal(readdirSync(recordings).filter((n) => n.endsWith('.h265')).length, 1);
    assert.ok(existsSync(join(root, 'data/models/det.onnx')));
    assert.match(readFileSync(join(root, 'data/config/edge_v3_layer.env'), 'utf8'), /EDGE_V3_LAYER=layer3_depth/);
  });

  it('--matrix runs the steps under each layer (applied first) and prints the table', async () => {
    const plan = join(scratch.dir, 'matrix.json');
    writeFileSync(
      plan,
      JSON.stringify({
        devices: ['cam-a'],
        defaults: { registry, root },
        steps: [{ 'prune-recordings': { 'dry-run': true } }],
        matrix: { layers: ['layer0', 'layer2'], restart: false },
      }),
    );
    const r = await runLookout(['orchestrate', '--batch', plan, '--matrix'], env, 120_000);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /device\s+layer\s+step\s+result/);
    assert.match(r.stdout, /cam-a\s+layer0\s+apply-layer\s+ok/);
    assert.match(r.stdout, /cam-a\s+layer2\s+prune-recordings\s+ok/);
    assert.match(readFileSync(join(root, 'data/config/edge_v3_layer.env'), 'utf8'), /EDGE_V3_LAYER=layer2_tracker/);
  });

  it('a plan that is not one is a usage error naming the fault', async () => {
    const plan = join(scratch.dir, 'bad.yaml');
    writeFileSync(plan, 'devices: [cam-a]\nsteps:\n  - reboot: {}\n');
    const r = await runLookout(['orchestrate', '--batch', plan], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^config_invalid: plan .*bad\.yaml: steps\.0/);
  });
});
