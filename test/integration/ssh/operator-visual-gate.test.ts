/**
 * `lookout visual-gate` over a real OpenSSH sshd on loopback: the snapshot is the last picture of the
 * newest recording chunk on the device (real H.265 chunks from the recorder's test fixtures), decoded
 * by ffmpeg and compared with pixelmatch; --update takes the baseline, the same picture passes, another
 * picture (an ffmpeg test pattern as the baseline) fails with exit 7 and the diff image beside it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { writeChunks } from '../../unit/plugins/recorder/chunk-fixtures.js';
import { cleanEnv, runLookout } from '../../support/operator-helpers.js';

describe('lookout visual-gate (real sshd on loopback, real chunks)', () => {
  let scratch: ScratchDir;
  let sshd: Sshd;
  let env: NodeJS.ProcessEnv;
  let root: string;
  let baselines: string;
  let device: string;

  before(async () => {
    scratch = await scratchDir('operator-visual-');
    sshd = await startSshd();
    root = join(scratch.dir, 'device');
    mkdirSync(join(root, 'data/recordings'), { recursive: true });
    await writeChunks(join(root, 'data/recordings'), 2);
    baselines = join(scratch.dir, 'baselines');
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    env = cleanEnv({ LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts });
    device = `127.0.0.1:${sshd.port}`;
  });

  after(async () => {
    await sshd?.stop();
    await scratch?.cleanup();
  });

  const gate = (extra: string[]) =>
    runLookout(['visual-gate', device, '--device-id', 'cam-v', '--root', root, '--baseline', baselines, '--json', ...extra], env);

  it('without a baseline it says how to take one; --update takes it; the same view passes', async () => {
    const none = await gate([]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no baseline .*cam-v\.png .*take one with --update/);
    const updated = await gate(['--update']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.ok(existsSync(join(baselines, 'cam-v.png')));
    const same = await gate([]);
    assert.equal(same.code, 0, same.stderr);
    const verdict = JSON.parse(same.stdout) as { passed: boolean; mismatched_ratio: number; diff: string };
    assert.equal(verdict.passed, true);
    assert.ok(verdict.mismatched_ratio <= 0.02);
    assert.ok(existsSync(verdict.diff));
  });

  it('another view fails with exit 7 and leaves the diff image beside the baseline', async () => {
    const baseline = readFileSync(join(baselines, 'cam-v.png'));
    const size = /^P6\s+(\d+)\s+(\d+)/.exec(
      execFileSync('ffmpeg', ['-v', 'error', '-i', 'pipe:0', '-f', 'image2pipe', '-vcodec', 'ppm', 'pipe:1'], { input: baseline })
        .subarray(0, 32)
        .toString('latin1'),
    )!;
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=${size[1]}x${size[2]}`, '-frames:v', '1', join(baselines, 'cam-v.png')]);
    const r = await gate([]);
    assert.equal(r.code, 7, r.stderr);
    assert.match(
      r.stderr,
      /^soak_gate_failed: cam-v: the snapshot differs from .*cam-v\.png in \d+\.\d+% of its pixels \(at most 2\.00%\); see .*cam-v\.diff\.png/,
    );
    const diff = readFileSync(join(baselines, 'cam-v.diff.png'));
    assert.deepEqual([...diff.subarray(1, 4)], [...Buffer.from('PNG')]);
  });
});
