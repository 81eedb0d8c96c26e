import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmod, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { checkIssuedBy } from '../../../lib/tls/certificate-check.js';
import { provisionFleetCertificates } from '../../../lib/tls/provision-fleet.js';
import { parseCertsArgs } from '../../../operator/src/certs-command.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';

const run = promisify(execFile);
const cli = join(packageRoot(), 'bin', 'lookout.js');
type Failure = { code: number; stderr: string };

describe('lookout certs', () => {
  let scratch: ScratchDir;
  beforeEach(async () => {
    scratch = await scratchDir('lookout-certs-cli-');
  });
  afterEach(() => scratch.cleanup());

  it('--help explains the groups and gives examples, exit 0', async () => {
    const { stdout } = await run(process.execPath, [cli, 'certs', '--help']);
    assert.match(stdout, /^lookout certs --ca-dir <dir>/);
    assert.match(stdout, /Examples:\n {2}lookout certs --ca-dir/);
    assert.match(stdout, /never replaced/);
  });

  it('creates the CA and issues two devices and the hub; a second run keeps them; --force issues again', async () => {
    const d = scratch.dir;
    const args = ['certs', '--ca-dir', join(d, 'ca'), '--device', 'cam-1', '--data-root', join(d, 'cam-1'), '--ip', '127.0.0.2', '--ip', '::1'];
    args.push('--device', 'cam-2', '--data-root', join(d, 'cam-2'), '--hub-data', join(d, 'hub'), '--hub-host', 'hub.test', '--san', '10.0.0.5', '--json');
    const first = JSON.parse((await run(process.execPath, [cli, ...args])).stdout) as {
      ca: { created: boolean; certPath: string };
      certificates: { name: string; action: string; certPath: string; keyPath: string; ips: string[] }[];
    };
    assert.equal(first.ca.created, true);
    assert.deepEqual(
      first.certificates.map((c) => [c.name, c.action, c.ips]),
      [
        ['cam-1', 'created', ['127.0.0.2', '::1']],
        ['cam-2', 'created', []],
        ['lookout-hub', 'created', []],
        ['hub.test', 'created', ['10.0.0.5', '127.0.0.1', '::1']],
      ],
    );
    // The hub's HTTPS server certificate: its names and addresses, and loopback's.
    assert.equal(first.certificates[3].certPath, join(d, 'hub', 'tls', 'hub-server.crt'));
    assert.equal(
      new X509Certificate(await readFile(first.certificates[3].certPath)).subjectAltName,
      'DNS:hub.test, DNS:localhost, IP Address:10.0.0.5, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    );
    const caPem = await readFile(join(d, 'ca', 'ca.crt'), 'utf8');
    for (const c of first.certificates) {
      assert.ok(checkIssuedBy(await readFile(c.certPath), caPem).ok, c.name);
      assert.equal((await stat(c.keyPath)).mode & 0o777, 0o600, c.keyPath);
    }
    assert.equal(first.certificates[0].certPath, join(d, 'cam-1', 'data', 'config', 'shadow_peer.crt'));
    assert.equal(
      new X509Certificate(await readFile(first.certificates[0].certPath)).subjectAltName,
      'DNS:cam-1, IP Address:127.0.0.2, IP Address:0:0:0:0:0:0:0:1',
    );
    assert.equal((await stat(join(d, 'ca', 'ca.key'))).mode & 0o777, 0o600);

    const again = JSON.parse((await run(process.execPath, [cli, ...args])).stdout) as typeof first;
    assert.equal(again.ca.created, false);
    assert.deepEqual(
      again.certificates.map((c) => c.action),
      ['kept', 'kept', 'kept', 'kept'],
    );
    // A kept key other users could read is made 0600, and the table says so.
    await chmod(first.certificates[0].keyPath, 0o644);
    const tightened = await run(process.execPath, [cli, ...args.filter((a) => a !== '--json')]);
    assert.match(tightened.stdout, /cam-1 +kept .*\(its key file was mode 0644, open to other users: now 0600/, tightened.stdout);
    assert.equal((await stat(first.certificates[0].keyPath)).mode & 0o777, 0o600);
    // A CA key other users could read is refused, like the fleet secret.
    await chmod(join(d, 'ca', 'ca.key'), 0o644);
    await assert.rejects(
      run(process.execPath, [cli, ...args]),
      (e: Failure) => e.code === 1 && /^argument_invalid: .*ca\.key is open to other users \(mode 0644\): chmod 600 it/.test(e.stderr),
    );
    await chmod(join(d, 'ca', 'ca.key'), 0o600);
    const forced = await run(process.execPath, [cli, ...args.filter((a) => a !== '--json'), '--force']);
    assert.match(forced.stdout, /^fleet CA {5}kept/);
    assert.equal(forced.stdout.match(/replaced .*\(replaced: forced\)/g)?.length, 4, forced.stdout);
    const renewed = await run(process.execPath, [cli, ...args.filter((a) => a !== '--json'), '--renew']);
    assert.equal(renewed.stdout.match(/replaced .*\(replaced: forced\)/g)?.length, 4, renewed.stdout);
  });

  it('status shows every certificate it issued with its days left; one within 30 days is flagged (exit 3) and renewed by the next run', async () => {
    const d = scratch.dir;
    const ca = join(d, 'ca');
    // Issued 710 days ago: the 730-day certificates have 20 days left (the 10-year CA plenty).
    const past = new Date(Date.now() - 710 * 86_400_000);
    await provisionFleetCertificates({ caDir: ca, devices: [{ deviceId: 'cam-1', dataRoot: join(d, 'cam-1') }], hubDataDir: join(d, 'hub'), now: past });
    const status = await run(process.execPath, [cli, 'certs', 'status', '--ca-dir', ca]).then(
      () => assert.fail('certs status exits 3 when a certificate expires within 30 days'),
      (e: Failure & { stdout: string }) => e,
    );
    assert.equal(status.code, 3);
    for (const name of ['fleet CA', 'cam-1', 'lookout-hub', 'hub-server']) {
      if (name === 'hub-server') assert.match(status.stdout, /^hub-server .* 19 days {2}.*hub-server\.crt {2}EXPIRING$/m, status.stdout);
      else if (name === 'fleet CA') assert.match(status.stdout, /^ca +fleet CA +\d{4}-\d\d-\d\d +29\d\d days {2}.*ca\.crt$/m, status.stdout);
      else assert.match(status.stdout, new RegExp(`^\\S+ +${name} .* 19 days  .* EXPIRING$`, 'm'), status.stdout);
    }
    const json = JSON.parse((await run(process.execPath, [cli, 'certs', 'status', '--ca-dir', ca, '--json']).catch((e: { stdout: string }) => e)).stdout) as {
      certificates: { role: string; daysLeft: number; state: string }[];
    };
    assert.deepEqual(
      json.certificates.map((c) => [c.role, c.state]),
      [
        ['ca', 'ok'],
        ['device', 'expiring'],
        ['hub', 'expiring'],
        ['hub-server', 'expiring'],
      ],
    );
    // A plain run renews what ends within 30 days.
    const renew = await run(process.execPath, [
      cli,
      'certs',
      '--ca-dir',
      ca,
      '--device',
      'cam-1',
      '--data-root',
      join(d, 'cam-1'),
      '--hub-data',
      join(d, 'hub'),
    ]);
    assert.equal(renew.stdout.match(/replaced .*\(replaced: it expires in 19 days\)/g)?.length, 3, renew.stdout);
    const after = await run(process.execPath, [cli, 'certs', 'status', '--ca-dir', ca]);
    assert.doesNotMatch(after.stdout, /EXPIRING/);
    assert.match(after.stdout, /^hub-server .* 7[23]\d days/m, after.stdout);
  });

  it('a command-line mistake exits 2 naming it; a bad address exits 1 with its code', async () => {
    const ca = join(scratch.dir, 'ca');
    const refused = (args: string[], pattern: RegExp, code = 2) =>
      assert.rejects(run(process.execPath, [cli, 'certs', ...args]), (e: Failure) => e.code === code && pattern.test(e.stderr));
    await refused(['--device', 'cam-1', '--data-root', scratch.dir], /^config_invalid: certs needs --ca-dir/);
    await refused(['--ca-dir', ca], /nothing to issue/);
    await refused(['--ca-dir', ca, '--device', 'cam-1'], /--device cam-1 needs its --data-root/);
    await refused(['--ca-dir', ca, '--ip', '127.0.0.2', '--device', 'cam-1', '--data-root', scratch.dir], /--ip 127\.0\.0\.2 comes before any --device/);
    await refused(['--ca-dir', ca, '--hub-data', scratch.dir, '--hub-dta', 'x'], /--hub-dta/);
    await refused(
      ['--ca-dir', ca, '--device', 'cam-1', '--data-root', scratch.dir, '--ip', 'cam.local'],
      /^argument_invalid: "cam\.local" is not an IP address/,
      1,
    );
  });
});

describe('parseCertsArgs', () => {
  it('gives each --data-root and --ip to the --device before it', () => {
    const r = parseCertsArgs([
      '--ca-dir',
      'ca',
      '--device',
      'a',
      '--ip',
      '10.0.0.1',
      '--data-root',
      'ra',
      '--device',
      'b',
      '--data-root',
      'rb',
      '--ip',
      '10.0.0.2',
    ]);
    assert.deepEqual(r.devices, [
      { deviceId: 'a', dataRoot: resolve('ra'), ips: ['10.0.0.1'] },
      { deviceId: 'b', dataRoot: resolve('rb'), ips: ['10.0.0.2'] },
    ]);
    assert.equal(r.caDir, resolve('ca'));
    assert.equal(r.hubDataDir, undefined);
    assert.throws(
      () => parseCertsArgs(['--ca-dir', 'ca', '--device', 'a', '--data-root', 'x', '--device', 'a', '--data-root', 'y']),
      /--device a is given twice/,
    );
    assert.throws(() => parseCertsArgs(['--ca-dir', 'ca', '--device', 'a', '--data-root', 'x', '--data-root', 'y']), /two --data-root/);
  });
});
