/**
 * The hub over HTTPS: a real hub (its hub-meta plugin, a memory bus) on 127.0.0.1, real node
 * https clients, the fleet CA and the hub's server certificate from `lookout certs`' own code.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { Agent, request, type RequestOptions } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import type { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { provisionFleetCertificates } from '../../../../lib/tls/provision-fleet.js';
import { hubServerTlsPaths } from '../../../../lib/tls/tls-paths.js';
import hubMeta from '../../../../hub/plugins/hub-meta/src/index.js';
import { runHub } from '../../../../hub/src/hub-cli.js';
import { decideHubTransport } from '../../../../hub/src/http/hub-transport.js';
import { startHubServer } from '../../../../hub/src/http/tls-server.js';
import type { RunningHub } from '../../../../hub/src/start-hub.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';
import { testHub, waitFor } from '../../../support/hub-helpers.js';

interface Got {
  status: number;
  body: string;
  fingerprint: string;
  reused: boolean;
  socket: TLSSocket;
}

/**
 * One GET over TLS; resolves with the answer and the certificate the server presented. A new
 * connection each time unless an agent is given (no pooled socket, no resumed TLS session).
 */
function get(url: string, options: RequestOptions = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', agent: false, ...options }, (res) => {
      const socket = res.socket as TLSSocket;
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), fingerprint, reused: req.reusedSocket, socket }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const fingerprintOf = async (path: string) => new X509Certificate(await readFile(path)).fingerprint256;

/** A logger whose lines the test reads. */
function capturing() {
  const lines: { level: number; msg: string }[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (s: string) => void lines.push(JSON.parse(s) as { level: number; msg: string }) } });
  return { logger, lines };
}

describe('the hub over HTTPS', () => {
  let scratch: ScratchDir;
  let caDir: string;
  let hubDir: string;
  let caPem: string;
  const bus = new MemoryBus();
  let hub: RunningHub;

  before(async () => {
    scratch = await scratchDir('lookout-hub-tls-');
    caDir = join(scratch.dir, 'ca');
    hubDir = join(scratch.dir, 'hub');
    await provisionFleetCertificates({ caDir, hubDataDir: hubDir, hubHostName: 'hub.test' });
    caPem = await readFile(join(caDir, 'ca.crt'), 'utf8');
    hub = await testHub({ bus, plugins: [hubMeta], dataDir: hubDir, host: '127.0.0.1', tls: true });
  });
  after(async () => {
    await hub?.close();
    await bus.close();
    await scratch.cleanup();
  });

  it('answers /health with the fleet CA trusted, under its names and addresses; a client that does not trust the CA is refused', async () => {
    assert.match(hub.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const ok = await get(`${hub.url}/health`, { ca: caPem });
    assert.equal(ok.status, 200, ok.body);
    assert.equal(ok.fingerprint, await fingerprintOf(hubServerTlsPaths(hubDir).certPath));
    // The certificate names localhost and the host name given to lookout certs, besides 127.0.0.1.
    assert.equal((await get(`https://localhost:${hub.port}/health`, { ca: caPem })).status, 200);
    assert.equal((await get(`${hub.url}/health`, { ca: caPem, servername: 'hub.test' })).status, 200);
    // The system's roots only: the fleet CA is not among them.
    await assert.rejects(get(`${hub.url}/health`), (err: NodeJS.ErrnoException) =>
      /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/.test(err.code ?? ''),
    );
    // Another fleet's CA.
    const other = join(scratch.dir, 'other-ca');
    await provisionFleetCertificates({ caDir: other, hubDataDir: join(scratch.dir, 'other-hub') });
    await assert.rejects(get(`${hub.url}/health`, { ca: await readFile(join(other, 'ca.crt')) }), (err: NodeJS.ErrnoException) =>
      /UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|CERT_SIGNATURE_FAILURE/.test(err.code ?? ''),
    );
    // A name the certificate does not carry.
    await assert.rejects(
      get(`${hub.url}/health`, { ca: caPem, servername: 'evil.test' }),
      (err: NodeJS.ErrnoException) => err.code === 'ERR_TLS_CERT_ALTNAME_INVALID',
    );
  });

  it('serves a certificate renewed on disk to new connections without a restart, while an open connection stays up', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: caPem });
    try {
      const first = await get(`${hub.url}/health`, { agent });
      const before = first.fingerprint;
      // lookout certs --renew: a new key and certificate, written by rename beside the old ones.
      await provisionFleetCertificates({ caDir, hubDataDir: hubDir, hubHostName: 'hub.test', force: true });
      const renewed = await fingerprintOf(hubServerTlsPaths(hubDir).certPath);
      assert.notEqual(renewed, before);
      await waitFor(
        'a new connection gets the renewed certificate',
        async () => (await get(`${hub.url}/health`, { ca: caPem })).fingerprint === renewed,
        15_000,
        50,
      );
      // The kept-alive connection is the same socket, still up, still with the certificate it shook hands with.
      const again = await get(`${hub.url}/health`, { agent });
      assert.equal(again.status, 200);
      assert.equal(again.reused, true);
      assert.equal(again.socket, first.socket);
      assert.equal(again.fingerprint, before);
    } finally {
      agent.destroy();
    }
  });

  it('reloads on SIGHUP, and keeps serving the certificate it has when the files on disk are not a fitting pair', async () => {
    const dir = join(scratch.dir, 'sighup');
    await provisionFleetCertificates({ caDir, hubDataDir: dir, hubHostName: 'hub.test' });
    const paths = hubServerTlsPaths(dir);
    const { logger, lines } = capturing();
    const web = await startHubServer({
      handler: (_req, res) => res.end('ok'),
      transport: { scheme: 'https', certPath: paths.certPath, keyPath: paths.keyPath, source: 'flags' },
      host: '127.0.0.1',
      port: 0,
      logger,
      watchFiles: false,
    });
    try {
      const url = `https://127.0.0.1:${web.port}/`;
      const served = (await get(url, { ca: caPem })).fingerprint;
      await provisionFleetCertificates({ caDir, hubDataDir: dir, hubHostName: 'hub.test', force: true });
      const renewed = await fingerprintOf(paths.certPath);
      // Nothing watches the files here: only the signal reloads.
      assert.equal((await get(url, { ca: caPem })).fingerprint, served);
      process.kill(process.pid, 'SIGHUP');
      await waitFor('the certificate reloaded on SIGHUP', async () => (await get(url, { ca: caPem })).fingerprint === renewed);
      // A key of another certificate: refused, the served one stays, and the log says why.
      await writeFile(paths.keyPath, await readFile(join(scratch.dir, 'hub', 'tls', 'hub.key')));
      const r = await web.reload();
      assert.equal(r.ok, false);
      assert.equal((await get(url, { ca: caPem })).fingerprint, renewed);
      assert.ok(lines.some((l) => l.level === 40 && /not reloaded, the one served stays: .*is not the private key of/.test(l.msg)));
    } finally {
      await web.close();
    }
  });
});

describe('plain HTTP or HTTPS, decided before any socket opens', () => {
  let scratch: ScratchDir;
  before(async () => {
    scratch = await scratchDir('lookout-hub-transport-');
  });
  after(() => scratch.cleanup());

  const refusedFor = (reason: RegExp) => (err: LookoutError) => err.code === 'config_invalid' && reason.test(err.message);

  it('loopback stays plain HTTP; beyond it, the fleet certificate or a given pair, else refused unless --insecure-http', async () => {
    const empty = join(scratch.dir, 'empty');
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost'])
      assert.deepEqual(decideHubTransport(host, empty, {}), { scheme: 'http', insecure: false });
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'hub.lan']) {
      assert.throws(
        () => decideHubTransport(host, empty, {}),
        (err: LookoutError) =>
          refusedFor(/beyond loopback, where the hub serves HTTPS only.*--insecure-http/)(err) &&
          (err.details as { reason?: string } | undefined)?.reason === 'tls_required',
      );
      assert.deepEqual(decideHubTransport(host, empty, { insecureHttp: true }), { scheme: 'http', insecure: true });
    }
    assert.deepEqual(decideHubTransport('0.0.0.0', empty, { tlsCert: 'a.crt', tlsKey: 'a.key' }), {
      scheme: 'https',
      certPath: join(process.cwd(), 'a.crt'),
      keyPath: join(process.cwd(), 'a.key'),
      source: 'flags',
    });
    assert.throws(() => decideHubTransport('127.0.0.1', empty, { tlsCert: 'a.crt' }), refusedFor(/go together/));
    assert.throws(() => decideHubTransport('0.0.0.0', empty, { tls: true, insecureHttp: true }), refusedFor(/give one of them/));
    assert.throws(() => decideHubTransport('127.0.0.1', empty, { tls: true }), refusedFor(/--tls: no certificate/));
    // With lookout certs' server certificate in the data dir, HTTPS is what a LAN address gets; loopback only with --tls.
    const dataDir = join(scratch.dir, 'hub');
    await provisionFleetCertificates({ caDir: join(scratch.dir, 'ca'), hubDataDir: dataDir });
    const fleet = hubServerTlsPaths(dataDir);
    assert.deepEqual(decideHubTransport('0.0.0.0', dataDir, {}), { scheme: 'https', certPath: fleet.certPath, keyPath: fleet.keyPath, source: 'fleet' });
    assert.deepEqual(decideHubTransport('127.0.0.1', dataDir, {}), { scheme: 'http', insecure: false });
    assert.equal(decideHubTransport('127.0.0.1', dataDir, { tls: true }).scheme, 'https');
  });

  it('lookout-hub on 0.0.0.0 with a token and no certificate does not start (exit 1, the reason on stderr); with --insecure-http it starts and warns', async () => {
    let stderr = '';
    const io = (argv: string[]) => ({
      argv,
      env: { LOOKOUT_HUB_TOKEN: 'hub-tls-test-token', LOOKOUT_LOG_LEVEL: 'silent' },
      stdout: () => undefined,
      stderr: (t: string) => void (stderr += t),
      shutdownSignal: () => Promise.resolve('test'),
    });
    const dataDir = join(scratch.dir, 'cli-hub');
    const code = await runHub(io(['--host', '0.0.0.0', '--port', '0', '--broker-port', '0', '--data-dir', dataDir]));
    assert.equal(code, 1);
    assert.match(stderr, /--host 0\.0\.0\.0 is beyond loopback, where the hub serves HTTPS only/);
    assert.match(stderr, /--insecure-http/);

    // Binds 0.0.0.0 (nothing is sent off this machine): plain HTTP, said at start.
    const { logger, lines } = capturing();
    const bus = new MemoryBus();
    const open = await testHub({ bus, plugins: [hubMeta], host: '0.0.0.0', anonymousBroker: false, token: 'hub-tls-test-token', insecureHttp: true, logger });
    try {
      assert.match(open.url, /^http:\/\/127\.0\.0\.1:/);
      assert.equal((await fetch(`${open.url}/health`)).status, 200);
      assert.ok(lines.some((l) => l.level === 40 && /--insecure-http: plain HTTP on 0\.0\.0\.0, beyond loopback/.test(l.msg)));
    } finally {
      await open.close();
      await bus.close();
    }
  });

  it('on 0.0.0.0 with the fleet certificate in its data dir, the hub serves HTTPS by default', async () => {
    const dataDir = join(scratch.dir, 'lan-hub');
    await provisionFleetCertificates({ caDir: join(scratch.dir, 'ca'), hubDataDir: dataDir });
    const bus = new MemoryBus();
    const lan = await testHub({ bus, plugins: [hubMeta], host: '0.0.0.0', anonymousBroker: false, token: 'hub-tls-test-token', dataDir });
    try {
      assert.match(lan.url, /^https:\/\/127\.0\.0\.1:/);
      const ok = await get(`${lan.url}/health`, { ca: await readFile(join(scratch.dir, 'ca', 'ca.crt')) });
      assert.equal(ok.status, 200);
    } finally {
      await lan.close();
      await bus.close();
    }
  });
});
