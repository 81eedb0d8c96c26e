/**
 * device-ssh against a real OpenSSH sshd on a loopback port (key authentication as root): listing
 * a real recordings folder over SFTP and with the shell listing, bounded reads, downloads that leave
 * no partial file, names refused before any connection, a dead port, a silent port, abort and reuse
 * of one connection.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LookoutError } from '../../../core/src/index.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { sshTestHub, type SshTestHub } from '../../unit/hub/plugins/device-ssh/ssh-test-hub.js';

const CHUNK_1 = '20260101T000000000Z_000001.h265';
const CHUNK_2 = '20260101T000100000Z_000002.h265';
const SIDECAR_1 = '20260101T000000000Z_000001.json';
const DETS_1 = '20260101T000000000Z_000001.dets.jsonl';
const MTIME_S = 1_767_225_600; // 2026-01-01T00:00:00Z

const rejectsWith = (code: string, extra?: (e: LookoutError) => void) => (err: unknown) => {
  assert.ok(err instanceof LookoutError, `expected a LookoutError, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  extra?.(err);
  return true;
};

/** A TCP port that accepts connections and never says a word (a hung device), counting them. */
function silentServer(): Promise<{ server: Server; port: number; connections: () => number }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server = createServer((s) => {
    count++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address ? address.port : 0, connections: () => count });
    }),
  );
}

describe('device-ssh against a real sshd', () => {
  let sshd: Sshd;
  let scratch: ScratchDir;
  let recordings: string;
  let downloads: string;
  let t: SshTestHub;
  let silent: Awaited<ReturnType<typeof silentServer>>;
  const chunk1 = Buffer.alloc(300_000, 7).map((_, i) => (i * 31) % 251);
  const sidecar = JSON.stringify({ name: CHUNK_1, duration_s: 2, fps: 10 });

  before(async () => {
    sshd = await startSshd();
    scratch = await scratchDir('device-ssh-sshd-');
    recordings = join(scratch.dir, 'recordings');
    downloads = join(scratch.dir, 'downloads');
    mkdirSync(recordings);
    mkdirSync(downloads);
    writeFileSync(join(recordings, CHUNK_1), chunk1);
    writeFileSync(join(recordings, CHUNK_2), Buffer.alloc(1000, 1));
    writeFileSync(join(recordings, SIDECAR_1), sidecar);
    writeFileSync(join(recordings, DETS_1), '{"t":1,"dets":[]}\n');
    writeFileSync(join(recordings, 'recent_manifest.jsonl'), `${sidecar}\n`);
    for (const name of [CHUNK_1, CHUNK_2, SIDECAR_1, DETS_1, 'recent_manifest.jsonl']) utimesSync(join(recordings, name), MTIME_S, MTIME_S);
    // None of these is listed or readable: a chunk being written, other files, a symlink out, a folder.
    writeFileSync(join(recordings, `.20260101T000200000Z_000003.h265.part`), 'partial');
    writeFileSync(join(recordings, 'notes.txt'), 'not a recording');
    symlinkSync('/etc/hostname', join(recordings, '20260101T000300000Z_000004.h265'));
    mkdirSync(join(recordings, '20260101T000400000Z_000005.h265'));
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `# pinned by the test\n${sshd.knownHostsLine}\n`);
    silent = await silentServer();
    const local = { ips: ['127.0.0.1'], tool_port: await freePort() };
    t = await sshTestHub({
      dir: scratch.dir,
      devices: [
        { device_id: 'cam-ssh', ...local, ssh_port: sshd.port, recordings_root: recordings },
        { device_id: 'cam-noroot', ...local, ssh_port: sshd.port, recordings_root: join(scratch.dir, 'absent') },
        { device_id: 'cam-dead', ...local, ssh_port: await freePort() },
        { device_id: 'cam-silent', ...local, ssh_port: silent.port, recordings_root: recordings },
      ],
      env: {
        LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath,
        LOOKOUT_SSH_KNOWN_HOSTS: knownHosts,
        LOOKOUT_SSH_CONNECT_TIMEOUT_MS: '800',
        LOOKOUT_SSH_TIMEOUT_MS: '3000',
      },
    });
  });

  after(async () => {
    await t?.close();
    await sshd?.stop();
    silent?.server.close();
    await scratch?.cleanup();
  });

  const expected = [
    { name: CHUNK_1, size: chunk1.length },
    { name: DETS_1, size: 18 },
    { name: SIDECAR_1, size: Buffer.byteLength(sidecar) },
    { name: CHUNK_2, size: 1000 },
    { name: 'recent_manifest.jsonl', size: Buffer.byteLength(sidecar) + 1 },
  ].sort((a, b) => (a.name < b.name ? -1 : 1));

  it('lists the recordings root over SFTP: recording files only, with sizes and times', async () => {
    assert.equal(t.ssh.configured, true);
    assert.equal(t.ssh.recordingsRoot('cam-ssh'), recordings);
    const files = await t.ssh.list('cam-ssh', 'sftp');
    assert.deepEqual(
      files.map(({ name, size }) => ({ name, size })),
      expected,
    );
    for (const f of files) assert.equal(f.mtimeMs, MTIME_S * 1000, f.name);
  });

  it('lists the same with the shell listing', async () => {
    const files = await t.ssh.list('cam-ssh', 'shell');
    assert.deepEqual(
      files.map(({ name, size }) => ({ name, size })),
      expected,
    );
    for (const f of files) assert.equal(f.mtimeMs, MTIME_S * 1000, f.name);
  });

  it('reads a sidecar whole, and refuses one larger than asked', async () => {
    assert.equal((await t.ssh.read('cam-ssh', SIDECAR_1, 4096)).toString(), sidecar);
    await assert.rejects(
      t.ssh.read('cam-ssh', SIDECAR_1, 10),
      rejectsWith('ssh_failed', (e) => assert.equal((e.details as { reason: string }).reason, 'too_large')),
    );
    await assert.rejects(t.ssh.read('cam-ssh', '20260101T000900000Z_000009.json', 4096), rejectsWith('recording_not_found'));
  });

  it('a symlink or a folder with a chunk name is not a recording', async () => {
    await assert.rejects(t.ssh.read('cam-ssh', '20260101T000300000Z_000004.h265', 4096), rejectsWith('recording_not_found'));
    await assert.rejects(t.ssh.download('cam-ssh', '20260101T000400000Z_000005.h265', join(downloads, 'dir.h265')), rejectsWith('recording_not_found'));
    assert.deepEqual(readdirSync(downloads), []);
  });

  it('downloads a chunk byte for byte, leaving no temporary file', async () => {
    const local = join(downloads, CHUNK_1);
    const { bytes } = await t.ssh.download('cam-ssh', CHUNK_1, local);
    assert.equal(bytes, chunk1.length);
    assert.ok(readFileSync(local).equals(chunk1));
    assert.deepEqual(readdirSync(downloads), [CHUNK_1]);
  });

  it('a failed download leaves no file', async () => {
    await assert.rejects(t.ssh.download('cam-ssh', '20260101T000900000Z_000009.h265', join(downloads, 'missing.h265')), rejectsWith('recording_not_found'));
    await assert.rejects(t.ssh.download('cam-ssh', CHUNK_2, join(downloads, 'no-such-folder', 'x.h265')), rejectsWith('ssh_failed'));
    assert.deepEqual(readdirSync(downloads), [CHUNK_1]);
  });

  it('refuses every name that is not a recording file, before connecting', async () => {
    const bad = [
      '../etc/passwd',
      '/etc/passwd',
      '..',
      '.',
      '',
      'a/b.h265',
      `../${CHUNK_1}`,
      `${CHUNK_1}/../../etc/shadow`,
      `./${CHUNK_1}`,
      '.hidden.h265',
      `.${CHUNK_1}.part`,
      `${CHUNK_1}\0`,
      `${CHUNK_1}\n`,
      'notes.txt',
      '..\\..\\x.h265',
      `${'a'.repeat(200)}.h265`,
    ];
    const before = silent.connections();
    for (const name of bad) {
      for (const device of ['cam-silent', 'cam-ssh']) {
        await assert.rejects(t.ssh.read(device, name, 100), rejectsWith('bad_request'), `read ${JSON.stringify(name)}`);
        await assert.rejects(t.ssh.download(device, name, join(downloads, 'x')), rejectsWith('bad_request'), `download ${JSON.stringify(name)}`);
      }
    }
    await assert.rejects(t.ssh.list('cam-silent', 'ftp' as 'sftp'), rejectsWith('bad_request'));
    assert.equal(silent.connections(), before, 'a refused name made a connection');
    assert.deepEqual(readdirSync(downloads), [CHUNK_1]);
  });

  it('a device not in the registry is target_unknown', async () => {
    await assert.rejects(t.ssh.list('cam-nobody', 'sftp'), rejectsWith('target_unknown'));
  });

  it('a missing recordings root is said so, over SFTP and the shell', async () => {
    for (const via of ['sftp', 'shell'] as const) {
      await assert.rejects(
        t.ssh.list('cam-noroot', via),
        rejectsWith('ssh_failed', (e) => assert.equal((e.details as { reason: string }).reason, 'root_missing', e.message)),
      );
    }
  });

  it('a dead port gives ssh_failed at once', async () => {
    const started = Date.now();
    await assert.rejects(
      t.ssh.list('cam-dead', 'sftp'),
      rejectsWith('ssh_failed', (e) => assert.match(e.message, /ECONNREFUSED/)),
    );
    assert.ok(Date.now() - started < 500, `took ${Date.now() - started} ms`);
  });

  it('a device that accepts and never answers gives ssh_timeout within the connect timeout', async () => {
    const started = Date.now();
    await assert.rejects(t.ssh.list('cam-silent', 'sftp'), rejectsWith('ssh_timeout'));
    const took = Date.now() - started;
    assert.ok(took >= 700 && took < 2500, `took ${took} ms`);
  });

  it('an abort stops a call at once', async () => {
    const started = Date.now();
    await assert.rejects(t.ssh.list('cam-silent', 'sftp', AbortSignal.timeout(100)), rejectsWith('ssh_timeout'));
    assert.ok(Date.now() - started < 600, `took ${Date.now() - started} ms`);
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(t.ssh.download('cam-ssh', CHUNK_1, join(downloads, 'aborted.h265'), controller.signal), rejectsWith('ssh_failed'));
    assert.deepEqual(readdirSync(downloads), [CHUNK_1]);
  });

  it('reuses one connection for many calls, also at once', async () => {
    const accepted = () =>
      sshd
        .logs()
        .split('\n')
        .filter((l) => l.includes('Accepted publickey')).length;
    await t.ssh.list('cam-ssh', 'sftp');
    const before = accepted();
    const results = await Promise.all(Array.from({ length: 12 }, () => t.ssh.read('cam-ssh', SIDECAR_1, 4096)));
    for (const r of results) assert.equal(r.toString(), sidecar);
    await t.ssh.list('cam-ssh', 'shell');
    assert.equal(accepted(), before, sshd.logs().slice(-2000));
  });

  it('failures reach the debug ring', async () => {
    const ring = await t.ring();
    assert.match(ring, /"kind":"ssh"/);
    assert.match(ring, /cam-dead/);
  });
});
