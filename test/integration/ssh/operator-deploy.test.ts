/**
 * `lookout deploy` and `apply-layer --restart` against a test device: a real OpenSSH sshd on
 * loopback (key authentication as root), the device's filesystem rooted in a folder, a real
 * mosquitto, and a real lookout-edge started by the device's service command (a shell script
 * standing in for systemctl: it stops the process in its pid file and starts
 * <root>/opt/lookout/current/bin/lookout-edge.js). Bundles come from scripts/bundle.mjs
 * --no-modules: the releases use the device's shared <root>/opt/lookout/node_modules.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { cleanEnv, runLookout } from '../../support/operator-helpers.js';

const DEVICE = 'cam-deploy';

function bundle(dir: string, version: string): string {
  const out = join(dir, `lookout-edge-${version}.tar.gz`);
  execFileSync(process.execPath, [join(packageRoot(), 'scripts', 'bundle.mjs'), '--out', out, '--version', version, '--no-modules'], { stdio: 'ignore' });
  return out;
}

/** A bundle whose runtime dies at start: what a bad build looks like on the device. */
function brokenBundle(dir: string, version: string): string {
  const stage = join(dir, `broken-${version}`);
  mkdirSync(join(stage, 'bin'), { recursive: true });
  writeFileSync(join(stage, 'BUNDLE.json'), JSON.stringify({ name: 'lookout-edge', version, arch: process.arch }));
  writeFileSync(join(stage, 'package.json'), JSON.stringify({ name: 'lookout', version, type: 'module' }));
  writeFileSync(join(stage, 'bin', 'lookout-edge.js'), "console.error('broken build: missing dist'); process.exit(1);\n");
  const out = join(dir, `broken-${version}.tar.gz`);
  execFileSync('tar', ['-czf', out, '-C', stage, '.']);
  return out;
}

describe('lookout deploy and apply-layer --restart (real sshd, mosquitto and lookout-edge)', () => {
  let scratch: ScratchDir;
  let sshd: Sshd;
  let broker: Mosquitto;
  let root: string;
  let env: NodeJS.ProcessEnv;
  let common: string[];
  let pidFile: string;

  before(async () => {
    scratch = await scratchDir('operator-deploy-');
    [sshd, broker] = await Promise.all([startSshd(), startMosquitto()]);
    root = join(scratch.dir, 'device');
    mkdirSync(join(root, 'opt', 'lookout'), { recursive: true });
    // Installed once on the device: the releases of --no-modules bundles find their packages here.
    symlinkSync(join(packageRoot(), 'node_modules'), join(root, 'opt', 'lookout', 'node_modules'));
    pidFile = join(root, 'run', 'lookout-edge.pid');
    const service = join(scratch.dir, 'restart-lookout-edge.sh');
    writeFileSync(
      service,
      [
        '#!/bin/sh',
        `PIDFILE='${pidFile}'`,
        'mkdir -p "$(dirname "$PIDFILE")"',
        'if [ -f "$PIDFILE" ]; then',
        '  PID=$(cat "$PIDFILE"); kill "$PID" 2>/dev/null',
        '  for i in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done',
        '  kill -9 "$PID" 2>/dev/null',
        'fi',
        `setsid ${process.execPath} '${root}/opt/lookout/current/bin/lookout-edge.js' --device-id ${DEVICE} --mqtt ${broker.url} --data-dir '${root}' --source sim --tool-port 0 --log-level warn </dev/null >>'${root}/edge.log' 2>&1 &`,
        'echo $! > "$PIDFILE"',
      ].join('\n') + '\n',
      { mode: 0o755 },
    );
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    env = cleanEnv({ LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts, LOOKOUT_MQTT_URL: broker.url });
    common = [`root@127.0.0.1:${sshd.port}`, '--device-id', DEVICE, '--root', root, '--service-command', `sh ${service}`, '--wait-s', '40', '--json'];
  });

  after(async () => {
    // The device process the service script started: stopped by its pid, never by name.
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8'));
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await Promise.all([sshd?.stop(), broker?.stop()]);
    await scratch?.cleanup();
  });

  it('deploys a bundle: unpacked into releases/<version>, current switched, the new version says hello', async () => {
    const first = await runLookout(['deploy', ...common, '--bundle', bundle(scratch.dir, '0.1.0-deploy.1')], env, 120_000);
    assert.equal(first.code, 0, `${first.stderr}\n${existsSync(join(root, 'edge.log')) ? readFileSync(join(root, 'edge.log'), 'utf8') : ''}`);
    assert.equal(JSON.parse(first.stdout).version, '0.1.0-deploy.1');
    assert.equal(readlinkSync(join(root, 'opt/lookout/current')), 'releases/0.1.0-deploy.1');

    const second = await runLookout(['deploy', ...common, '--bundle', bundle(scratch.dir, '0.1.0-deploy.2')], env, 120_000);
    assert.equal(second.code, 0, second.stderr);
    const result = JSON.parse(second.stdout) as { version: string; previous: string };
    assert.deepEqual([result.version, result.previous], ['0.1.0-deploy.2', '0.1.0-deploy.1']);
    assert.equal(readlinkSync(join(root, 'opt/lookout/current')), 'releases/0.1.0-deploy.2');
    assert.equal(JSON.parse(readFileSync(join(root, 'opt/lookout/current/package.json'), 'utf8')).version, '0.1.0-deploy.2');
  });

  it('a broken bundle rolls back to the previous release (exit 8) and the previous version says hello again', async () => {
    const r = await runLookout(['deploy', ...common, '--wait-s', '8', '--bundle', brokenBundle(scratch.dir, '0.1.0-broken.3')], env, 120_000);
    assert.equal(r.code, 8, r.stderr);
    assert.match(r.stderr, /^deploy_rolled_back: cam-deploy: 0\.1\.0-broken\.3 did not come up .*rolled back to 0\.1\.0-deploy\.2: 0\.1\.0-deploy\.2 is back/);
    assert.equal(readlinkSync(join(root, 'opt/lookout/current')), 'releases/0.1.0-deploy.2');
  });

  it('apply-layer --restart writes the layer, restarts the runtime and waits for its hello with the layer', async () => {
    const r = await runLookout(['apply-layer', 'layer4_thermal', ...common, '--restart'], env, 120_000);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { layer: string; hello: { layer: string } };
    assert.equal(result.hello.layer, 'layer4');
    assert.match(readFileSync(join(root, 'data/config/edge_v3_layer.env'), 'utf8'), /EDGE_V3_LAYER=layer4_thermal/);
  });

  it('a deploy to an unreachable device fails with exit 5 before anything is built into place', async () => {
    const r = await runLookout(
      ['deploy', 'root@127.0.0.1:1', '--device-id', DEVICE, '--root', root, '--bundle', bundle(scratch.dir, '0.1.0-deploy.9'), '--json'],
      env,
    );
    assert.equal(r.code, 5, r.stderr);
    assert.equal(readlinkSync(join(root, 'opt/lookout/current')), 'releases/0.1.0-deploy.2');
  });
});
