/**
 * `lookout soak-gate` over a real OpenSSH sshd on loopback, the device's filesystem rooted in a
 * folder. The thermal zone is a file the test sets (the edge of the world: a sysfs file), and the
 * recorder's `.h265_status` is written by a TEST DOUBLE of the recorder (below) that counts frames
 * at a set fps and writes the file atomically as the recorder does, so that a stall or a hot die
 * can be made at will.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { cleanEnv, runLookout } from '../../support/operator-helpers.js';

/** TEST DOUBLE of the recorder's status writer: encode.frames grows at `fps` while `running`. */
function recorderStatus(dir: string, fps: number): { running: boolean; stop(): void } {
  mkdirSync(dir, { recursive: true });
  const state = { running: true, frames: 0, last: Date.now() };
  const write = (): void => {
    const now = Date.now();
    if (state.running) state.frames += Math.round(((now - state.last) / 1000) * fps);
    state.last = now;
    const tmp = join(dir, '.h265_status.tmp');
    writeFileSync(
      tmp,
      JSON.stringify({ version: 1, updated_at: new Date(now).toISOString(), encode: { codec: 'hevc', fps, frames: state.frames, running: true } }),
    );
    renameSync(tmp, join(dir, '.h265_status'));
  };
  write();
  const timer = setInterval(write, 200);
  return {
    get running() {
      return state.running;
    },
    set running(v: boolean) {
      state.running = v;
    },
    stop: () => clearInterval(timer),
  };
}

describe('lookout soak-gate (real sshd on loopback)', () => {
  let scratch: ScratchDir;
  let sshd: Sshd;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    scratch = await scratchDir('operator-soak-');
    sshd = await startSshd();
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    env = cleanEnv({ LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts });
  });

  after(async () => {
    await sshd?.stop();
    await scratch?.cleanup();
  });

  function device(name: string, celsius: number): { root: string; zone: string } {
    const root = join(scratch.dir, name);
    const zone = join(root, 'sys/class/thermal/thermal_zone0');
    mkdirSync(zone, { recursive: true });
    mkdirSync(join(root, 'data/config'), { recursive: true });
    writeFileSync(join(root, 'data/config/edge_v3_layer.env'), 'EDGE_V3_LAYER=layer4_thermal\nTHERMAL_WARN_C=70\n');
    writeFileSync(join(zone, 'temp'), `${celsius * 1000}\n`);
    return { root, zone: join(zone, 'temp') };
  }

  const gate = (root: string, extra: string[] = []) =>
    runLookout(['soak-gate', `127.0.0.1:${sshd.port}`, '0.05', '--root', root, '--interval-s', '0.5', '--stall-s', '1.5', '--json', ...extra], env);

  it('passes when the die stays cool and the encoder grows at its rate, and leaves the pass marker', async () => {
    const { root } = device('cool', 52.5);
    const recorder = recorderStatus(join(root, 'data/recordings'), 10);
    try {
      const r = await gate(root);
      assert.equal(r.code, 0, r.stderr);
      const verdict = JSON.parse(r.stdout) as { passed: boolean; max_celsius: number; warn_celsius: number; layer: string };
      assert.deepEqual([verdict.passed, verdict.max_celsius, verdict.warn_celsius, verdict.layer], [true, 52.5, 70, 'layer4_thermal']);
      const marker = JSON.parse(readFileSync(join(root, 'data/config/soak_gate_pass.json'), 'utf8')) as { layer: string; frames_grown: number };
      assert.equal(marker.layer, 'layer4_thermal');
      assert.ok(marker.frames_grown > 0);
    } finally {
      recorder.stop();
    }
  });

  it('fails with exit 7 when the die reaches THERMAL_WARN, saying so, and writes no marker', async () => {
    const { root } = device('hot', 71);
    const recorder = recorderStatus(join(root, 'data/recordings'), 10);
    try {
      const r = await gate(root);
      assert.equal(r.code, 7);
      assert.match(r.stderr, /^soak_gate_failed: .*die temperature 71\.0 C .*reached THERMAL_WARN \(70 C\)/);
      assert.equal(existsSync(join(root, 'data/config/soak_gate_pass.json')), false);
    } finally {
      recorder.stop();
    }
  });

  it('fails with exit 7 when the encoder stalls', async () => {
    const { root } = device('stalled', 50);
    const recorder = recorderStatus(join(root, 'data/recordings'), 10);
    recorder.running = false;
    try {
      const r = await gate(root);
      assert.equal(r.code, 7);
      assert.match(r.stderr, /frame counter stood still/);
    } finally {
      recorder.stop();
    }
  });
});
