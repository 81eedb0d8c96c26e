/**
 * `lookout push-models` throughput beside `scp` of the same file over the same real sshd on
 * 127.0.0.1 (key authentication as root), each run end to end as an operator runs it (process
 * start, SSH handshake, copy). push-models does more than scp: the free-space check, the SHA-256
 * of the file here and on the device, and the rename into place; the ratio is push-models / scp in
 * MB/s (1.0: as fast as scp); a second baseline adds what push-models checks (sha256sum of the copy on
 * the device over ssh) to scp. Medians of a few runs, each to a fresh device root.
 *
 *   node dist/test/bench/push-models.bench.js      (npm run bench -- push-models)
 *   LOOKOUT_BENCH_MODEL_MB=256 LOOKOUT_BENCH_RUNS=5 node dist/test/bench/push-models.bench.js
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startSshd } from '../support/sshd.js';
import { cleanEnv, LOOKOUT } from '../support/operator-helpers.js';

const run = promisify(execFile);
const MB = Number(process.env.LOOKOUT_BENCH_MODEL_MB ?? 64);
const RUNS = Number(process.env.LOOKOUT_BENCH_RUNS ?? 3);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const dir = mkdtempSync(join(tmpdir(), 'lookout-bench-push-'));
const sshd = await startSshd();
try {
  const model = join(dir, 'bench_model.dlc');
  writeFileSync(model, randomBytes(MB * 1024 * 1024));
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
  const env = cleanEnv({ LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts });
  const push: number[] = [];
  const scp: number[] = [];
  const scpChecked: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const pushRoot = join(dir, `push-${i}`);
    const scpDest = join(dir, `scp-${i}`, 'data', 'models');
    mkdirSync(scpDest, { recursive: true });
    // Alternated, so neither side always runs on a warmer cache.
    const pushRun = () => run(process.execPath, [LOOKOUT, 'push-models', `127.0.0.1:${sshd.port}`, model, '--root', pushRoot, '--json'], { env });
    const scpRun = () =>
      run('scp', [
        '-q',
        '-i',
        sshd.clientKeyPath,
        '-P',
        String(sshd.port),
        '-o',
        `UserKnownHostsFile=${knownHosts}`,
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        'BatchMode=yes',
        model,
        `root@127.0.0.1:${scpDest}/`,
      ]);
    // What push-models verifies, done by hand: scp, then sha256sum of the copy on the device over ssh.
    const scpCheckedRun = async () => {
      await scpRun();
      await run('ssh', [
        '-i',
        sshd.clientKeyPath,
        '-p',
        String(sshd.port),
        '-o',
        `UserKnownHostsFile=${knownHosts}`,
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        'BatchMode=yes',
        'root@127.0.0.1',
        `sha256sum -b ${scpDest}/bench_model.dlc`,
      ]);
    };
    const order = i % 2 === 0 ? [pushRun, scpRun, scpCheckedRun] : [scpCheckedRun, scpRun, pushRun];
    for (const step of order) {
      const seconds = await timed(step);
      (step === pushRun ? push : step === scpRun ? scp : scpChecked).push(seconds);
    }
    rmSync(pushRoot, { recursive: true, force: true });
    rmSync(join(dir, `scp-${i}`), { recursive: true, force: true });
  }
  const pushMBs = MB / median(push);
  const scpMBs = MB / median(scp);
  console.log(`file: ${MB} MiB, ${RUNS} runs each, medians, over OpenSSH sshd on 127.0.0.1`);
  console.log(`push-models (copy, SHA-256 here and on the device, rename)  : ${median(push).toFixed(2)} s  ${pushMBs.toFixed(1)} MiB/s`);
  console.log(`scp (baseline)                                               : ${median(scp).toFixed(2)} s  ${scpMBs.toFixed(1)} MiB/s`);
  const checkedMBs = MB / median(scpChecked);
  console.log(`scp + ssh sha256sum on the device (the same check, by hand) : ${median(scpChecked).toFixed(2)} s  ${checkedMBs.toFixed(1)} MiB/s`);
  console.log(`ratio push-models / scp throughput: ${(pushMBs / scpMBs).toFixed(2)}`);
  console.log(`ratio push-models / (scp + sha256sum) throughput: ${(pushMBs / checkedMBs).toFixed(2)}`);
} finally {
  await sshd.stop();
  rmSync(dir, { recursive: true, force: true });
}
