/**
 * The operator's SSH commands (apply-layer, push-models) against a real OpenSSH sshd on loopback
 * (test/support/sshd.ts: its own config and host key, key authentication as root), the device's
 * filesystem rooted in a folder (--root); a wrong password against the ssh2 TEST DOUBLE of a device
 * sshd (a test cannot set a system password for OpenSSH); a full disk on a real small tmpfs.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { cannotMount, mountSmallFilesystem } from '../../support/small-filesystem.js';
import { generateKeyPair, startSshd, type Sshd } from '../../support/sshd.js';
import { startPasswordServer } from '../../support/ssh-password-server.js';
import { waitFor } from '../../support/wait-for.js';
import { writeManifest } from '../../../plugins/recorder/src/manifest-file.js';
import { readSidecar } from '../../../plugins/recorder/src/sidecar.js';
import { writeChunks } from '../../unit/plugins/recorder/chunk-fixtures.js';
import { cleanEnv, LOOKOUT, runLookout, runProgram, spawnLookout } from '../../support/operator-helpers.js';

const sha = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

describe('lookout over SSH: apply-layer and push-models (real sshd on loopback)', () => {
  let scratch: ScratchDir;
  let sshd: Sshd;
  let root: string;
  let knownHosts: string;
  let registry: string;
  let env: NodeJS.ProcessEnv;
  let models: string;

  before(async () => {
    scratch = await scratchDir('operator-ssh-');
    sshd = await startSshd();
    root = join(scratch.dir, 'device');
    mkdirSync(root);
    knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    registry = join(scratch.dir, 'registry.json');
    writeFileSync(registry, JSON.stringify({ devices: [{ device_id: 'cam-op', ips: ['127.0.0.1'], ssh_port: sshd.port, ssh_user: 'root' }] }));
    env = cleanEnv({ LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts, LOOKOUT_REGISTRY_FILE: registry });
    models = join(scratch.dir, 'models');
    mkdirSync(models);
  });

  after(async () => {
    await sshd?.stop();
    await scratch?.cleanup();
  });

  it('apply-layer --dry-run shows the diff and writes nothing; then writes the mirror and the durable file', async () => {
    const dry = await runLookout(['apply-layer', 'layer3', 'cam-op', '--root', root, '--dry-run'], env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /\+ EDGE_V3_LAYER=layer3_depth/);
    assert.match(dry.stdout, /dry run: nothing written/);
    assert.equal(existsSync(join(root, 'data/config/edge_v3_layer.env')), false);

    const applied = await runLookout(['apply-layer', 'layer3', 'cam-op', '--root', root, '--json'], env);
    assert.equal(applied.code, 0, applied.stderr);
    const result = JSON.parse(applied.stdout) as { layer: string; durable: string; diff: { added: Record<string, string> } };
    assert.equal(result.layer, 'layer3');
    assert.equal(result.durable, join(root, 'data/config/edge_v3_layer.env'));
    const shipped = readFileSync(join(process.cwd(), 'configs/layers/layer3_depth.env'), 'utf8');
    assert.equal(readFileSync(join(root, 'data/config/edge_v3_layer.env'), 'utf8'), shipped);
    assert.equal(readFileSync(join(root, 'app-storage/config/edge_v3_layer.env'), 'utf8'), shipped);
    // Atomic writes leave no temp file behind.
    assert.deepEqual(readdirSync(join(root, 'data/config')), ['edge_v3_layer.env']);

    const next = await runLookout(['apply-layer', 'layer2', 'cam-op', '--root', root, '--dry-run'], env);
    assert.match(next.stdout, /- EDGE_V3_LAYER=layer3_depth\n\+ EDGE_V3_LAYER=layer2_tracker/);
  });

  it('apply-layer refuses a layer env with an invalid value before touching the device', async () => {
    const bad = join(scratch.dir, 'bad.env');
    writeFileSync(bad, 'EDGE_V3_LAYER=layer2\nRF_DETR_STRIDE_FPS=fast\n');
    const r = await runLookout(['apply-layer', 'layer2', 'cam-op', '--root', join(scratch.dir, 'untouched'), '--layer-env', bad], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^config_invalid: RF_DETR_STRIDE_FPS="fast"/);
    assert.equal(existsSync(join(scratch.dir, 'untouched')), false);
  });

  it('push-models copies a model, checks its SHA-256 on the device and renames it into place', async () => {
    const model = join(models, 'rfdetr_640.dlc');
    const data = randomBytes(3 * 1024 * 1024 + 123);
    writeFileSync(model, data);
    const r = await runLookout(['push-models', 'cam-op', model, '--root', root, '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const copied = JSON.parse(r.stdout.split('\n')[0]) as { sha256: string; bytes: number; resumed_from: number };
    assert.equal(copied.sha256, sha(data));
    assert.equal(copied.resumed_from, 0);
    assert.equal(sha(readFileSync(join(root, 'data/models/rfdetr_640.dlc'))), sha(data));
    assert.deepEqual(readdirSync(join(root, 'data/models')), ['rfdetr_640.dlc']);

    const refused = await runLookout(['push-models', 'cam-op', join(scratch.dir, 'registry.json'), '--root', root], env);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /copies \.dlc, \.onnx and \.tar files/);
  });

  it('prune-recordings over SSH: DRY_RUN=1 reports and changes nothing; KEEP_CHUNKS keeps exactly that many, unjustified first', async () => {
    const dir = join(root, 'data/recordings');
    mkdirSync(dir, { recursive: true });
    const justified = (i: number) => i % 3 === 0;
    const names = await writeChunks(dir, 8, { justified });
    const sidecars = await Promise.all(names.map((n) => readSidecar(dir, n)));
    await writeManifest(
      dir,
      sidecars.filter((x) => x !== undefined),
      8,
    );
    const before = readdirSync(dir).sort();

    const dry = await runLookout(['prune-recordings', 'cam-op', '--root', root, '--json'], { ...env, KEEP_CHUNKS: '3', DRY_RUN: '1' });
    assert.equal(dry.code, 0, dry.stderr);
    const dryReport = JSON.parse(dry.stdout) as { removed: { name: string }[]; dry_run: boolean };
    assert.equal(dryReport.dry_run, true);
    assert.equal(dryReport.removed.length, 5);
    assert.deepEqual(readdirSync(dir).sort(), before);

    const r = await runLookout(['prune-recordings', 'cam-op', '--root', root, '--json'], { ...env, KEEP_CHUNKS: '3' });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { removed: { name: string }[]; kept_chunks: number; manifest_lines_dropped: number };
    const unjustified = names.filter((_, i) => !justified(i));
    assert.deepEqual(
      report.removed.map((x) => x.name),
      unjustified,
    );
    assert.equal(report.kept_chunks, 3);
    assert.equal(report.manifest_lines_dropped, 5);
    assert.deepEqual(
      readdirSync(dir)
        .filter((n) => n.endsWith('.h265'))
        .sort(),
      names.filter((_, i) => justified(i)),
    );
    assert.equal(readFileSync(join(dir, 'recent_manifest.jsonl'), 'utf8').trim().split('\n').length, 3);
  });

  it('on a terminal a progress bar shows the copy; piped, the output has none', async () => {
    const model = join(models, 'progress.dlc');
    writeFileSync(model, randomBytes(2 * 1024 * 1024));
    // script(1) gives the command a pseudo-terminal, as an operator's shell would.
    const command = [process.execPath, LOOKOUT, 'push-models', 'cam-op', model, '--root', root, '--bandwidth', '4000'].map((w) => `'${w}'`).join(' ');
    const onTty = await runProgram('script', ['-qec', command, '/dev/null'], env);
    assert.equal(onTty.code, 0, onTty.stdout);
    assert.match(onTty.stdout, /progress\.dlc \[[█░]+\] 100% \| 2097152\/2097152 bytes/);
    const piped = await runLookout(['push-models', 'cam-op', model, '--root', root], env);
    assert.equal(piped.code, 0, piped.stderr);
    assert.doesNotMatch(piped.stdout, /█|\[\d+%/);
  });

  it('an interrupted copy resumes where it stopped, and the result is whole', async () => {
    const model = join(models, 'depth.onnx');
    const data = randomBytes(6 * 1024 * 1024);
    writeFileSync(model, data);
    const partial = join(root, 'data/models/.depth.onnx.partial');
    // Slowed to 2 MB/s so it can be cut in the middle, as a dropped link would.
    const child = spawnLookout(['push-models', 'cam-op', model, '--root', root, '--bandwidth', '2000'], env);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await waitFor(() => existsSync(partial) && statSync(partial).size > 2 * 1024 * 1024, 'half of the copy', 20_000);
    child.kill('SIGKILL');
    await exited;
    assert.equal(existsSync(join(root, 'data/models/depth.onnx')), false, 'a half-copied model never carries its name');
    const cut = statSync(partial).size;

    const r = await runLookout(['push-models', 'cam-op', model, '--root', root, '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const copied = JSON.parse(r.stdout.split('\n')[0]) as { resumed_from: number };
    assert.ok(copied.resumed_from > 0 && copied.resumed_from <= cut, `resumed from ${copied.resumed_from} (cut at ${cut})`);
    assert.equal(sha(readFileSync(join(root, 'data/models/depth.onnx'))), sha(data));
    assert.equal(existsSync(partial), false);
  });

  it('a wrong password is refused with exit 3 and the password never shows (ssh2 test double)', async () => {
    const served = join(scratch.dir, 'served');
    mkdirSync(served);
    const password = `pw-${randomBytes(6).toString('hex')}`;
    const server = await startPasswordServer({ user: 'root', password, root: served });
    try {
      const kh = join(scratch.dir, 'kh-double');
      writeFileSync(kh, `${server.knownHostsLine}\n`);
      const wrong = `wrong-${randomBytes(6).toString('hex')}`;
      const r = await runLookout(['push-models', `127.0.0.1:${server.port}`, join(models, 'rfdetr_640.dlc'), '--root', served], {
        ...cleanEnv({ DEVICE_PASSWORD: wrong, LOOKOUT_SSH_KNOWN_HOSTS: kh }),
      });
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /^ssh_auth_failed: .*refused the SSH credentials \(user root\)/);
      assert.equal(`${r.stdout}${r.stderr}`.includes(wrong), false);
      assert.ok(server.attempts >= 1);
    } finally {
      await server.stop();
    }
  });

  it('an unknown or changed host key is refused with exit 4 before any credential is sent', async () => {
    const empty = join(scratch.dir, 'kh-empty');
    writeFileSync(empty, '');
    const unknown = await runLookout(['apply-layer', 'layer2', 'cam-op', '--root', root], { ...env, LOOKOUT_SSH_KNOWN_HOSTS: empty });
    assert.equal(unknown.code, 4);
    assert.match(unknown.stderr, /^ssh_host_key_unknown: .*not pinned: refused/);

    const other = await generateKeyPair(scratch.dir, 'other_host_key');
    const changed = join(scratch.dir, 'kh-changed');
    writeFileSync(changed, `[127.0.0.1]:${sshd.port} ${other.publicKey}\n`);
    const r = await runLookout(['push-models', 'cam-op', join(models, 'rfdetr_640.dlc'), '--root', root], { ...env, LOOKOUT_SSH_KNOWN_HOSTS: changed });
    assert.equal(r.code, 4);
    assert.match(r.stderr, /^ssh_host_key_changed: /);
  });

  it('an unreachable device gives exit 5', async () => {
    const port = await freePort();
    const r = await runLookout(['apply-layer', 'layer2', `127.0.0.1:${port}`, '--root', root, '--connect-timeout-ms', '3000'], {
      ...env,
      LOOKOUT_REGISTRY_FILE: undefined,
    });
    assert.equal(r.code, 5);
    assert.match(r.stderr, /nothing listens for SSH there .*unreachable/);
  });

  it('push-models refuses a copy that does not fit, with the figures, exit 6 (a full tmpfs)', { skip: cannotMount() }, async () => {
    const small = await mountSmallFilesystem({ sizeKiB: 4096, prefix: 'operator-full-' });
    try {
      const big = join(models, 'big.tar');
      writeFileSync(big, randomBytes(1536 * 1024));
      small.fill();
      const r = await runLookout(['push-models', 'cam-op', big, '--root', small.dir], env);
      assert.equal(r.code, 6, r.stderr);
      assert.match(r.stderr, /^device_storage_full: .*big\.tar needs 1\.6 MB .* MB are free: nothing copied/);
      assert.equal(existsSync(join(small.dir, 'data/models/.big.tar.partial')), false);
      small.free();
      const ok = await runLookout(['push-models', 'cam-op', big, '--root', small.dir], env);
      assert.equal(ok.code, 0, ok.stderr);
    } finally {
      await small.unmount();
    }
  });
});
