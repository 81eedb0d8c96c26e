/**
 * The live stream's transport by the tool server's rule: the decision, and the encode plugin serving
 * GET /live.h265 over HTTPS with the device certificate (real sockets on 127.0.0.1, a real encoder)
 * and announcing `live` among the surfaces that speak TLS, which the hello's `tls` list carries.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import type { PluginContext } from '../../../../core/src/plugin/context.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import { deviceTlsPaths } from '../../../../lib/tls/tls-paths.js';
import cameraPlugin from '../../../../plugins/camera/src/index.js';
import encodePlugin from '../../../../plugins/encode/src/index.js';
import { decideLiveTransport } from '../../../../plugins/encode/src/live-transport.js';
import { helloMessage } from '../../../../plugins/identity/src/identity-report.js';
import type { DeviceIdentity } from '../../../../plugins/identity/src/service.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';

const TOKEN = 'live-tls-tool-token-0123456789';

describe('decideLiveTransport: the tool server’s rule for the live stream', () => {
  let scratch: ScratchDir;
  let cert: string;
  let bare: string;
  before(async () => {
    scratch = await scratchDir('lookout-live-transport-');
    cert = join(scratch.dir, 'cam-1');
    bare = join(scratch.dir, 'bare');
    await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-1', dataRoot: cert }] });
  });
  after(() => scratch?.cleanup());
  const https = (root: string) => ({ scheme: 'https', ...pathsOf(root) });
  const base = { mode: 'auto' as const, besideToolServer: true, tlsSurfaces: [] as string[] };

  it('beyond loopback: HTTPS with the device certificate; without one it is missing (the plugin refuses to listen there)', () => {
    for (const host of ['0.0.0.0', '::', '10.200.0.1']) assert.deepEqual(decideLiveTransport({ ...base, host, dataDir: cert }), https(cert));
    assert.deepEqual(decideLiveTransport({ ...base, host: '0.0.0.0', dataDir: bare }), { scheme: 'missing', certPath: deviceTlsPaths(bare).certPath });
  });

  it('loopback: plain unless asked (LIVE_TLS=on, or the tool server beside it serves HTTPS)', () => {
    assert.deepEqual(decideLiveTransport({ ...base, host: '127.0.0.1', dataDir: cert }), { scheme: 'http', insecure: false });
    assert.deepEqual(decideLiveTransport({ ...base, host: '127.0.0.1', dataDir: cert, mode: 'on' }), https(cert));
    assert.deepEqual(decideLiveTransport({ ...base, host: '127.0.0.1', dataDir: cert, tlsSurfaces: ['tools'] }), https(cert));
    // LIVE_HOST given: the stream is not beside the tool server, its transport is its own.
    assert.deepEqual(decideLiveTransport({ ...base, host: '127.0.0.1', dataDir: cert, tlsSurfaces: ['tools'], besideToolServer: false }), {
      scheme: 'http',
      insecure: false,
    });
  });

  it('LIVE_TLS=off: plain HTTP, marked insecure beyond loopback', () => {
    assert.deepEqual(decideLiveTransport({ ...base, host: '0.0.0.0', dataDir: cert, mode: 'off' }), { scheme: 'http', insecure: true });
    assert.deepEqual(decideLiveTransport({ ...base, host: '127.0.0.1', dataDir: cert, mode: 'off' }), { scheme: 'http', insecure: false });
  });
});

describe('the encode plugin on 0.0.0.0 (traffic only to 127.0.0.1)', () => {
  let scratch: ScratchDir;
  let certs: TestFleetCerts;
  before(async () => {
    scratch = await scratchDir('lookout-live-tls-');
    certs = await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-enc', dataRoot: join(scratch.dir, 'cam-enc') }] });
  });
  after(() => scratch?.cleanup());

  const run = (dataDir: string, env: Record<string, string> = {}) =>
    loadPlugins({
      plugins: [cameraPlugin, encodePlugin],
      runtime: { kind: 'device', id: 'cam-enc', dataDir, layer: 'layer0', device: { source: 'sim' } },
      bus: new MemoryBus(),
      env: { ENCODE_RESOLUTION: '160x120', ENCODE_FPS: '2', ENCODE_GOP: '2', LIVE_PORT: '0', LIVE_HOST: '0.0.0.0', LOOKOUT_TOOL_TOKEN: TOKEN, ...env },
      logger: createLogger({ level: 'silent' }),
    });
  const encodeState = (r: Awaited<ReturnType<typeof run>>) => r.plugins.find((p) => p.name === 'encode')!;

  it('with its certificate: HTTPS that a client trusting the fleet CA verifies as the device, announced as TLS', async () => {
    const r = await run(join(scratch.dir, 'cam-enc'));
    try {
      assert.equal(encodeState(r).state, 'ok', encodeState(r).message);
      assert.deepEqual(r.tlsPorts, ['live']);
      const answer = await new Promise<{ status: number; fingerprint: string }>((resolve, reject) => {
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port: r.ports.live,
            path: '/live.h265',
            ca: certs.caCertPem,
            servername: 'cam-enc',
            headers: { authorization: `Bearer ${TOKEN}` },
          },
          (res) => {
            const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
            res.destroy();
            resolve({ status: res.statusCode ?? 0, fingerprint });
          },
        );
        req.once('error', reject);
        req.end();
      });
      assert.ok(answer.status === 200 || answer.status === 503, `status ${answer.status}`);
      assert.equal(answer.fingerprint, certs.device('cam-enc').fingerprint);
      // Plain HTTP to it gets no answer: the socket speaks TLS only.
      await assert.rejects(
        new Promise((resolve, reject) => {
          const req = httpRequest({ host: '127.0.0.1', port: r.ports.live, path: '/live.h265' }, resolve);
          req.once('error', reject);
          req.end();
        }),
      );
    } finally {
      await r.stop();
    }
  });

  it('a certificate renewed on disk and SIGHUP: new connections get the renewed one, without a restart', async () => {
    const root = join(scratch.dir, 'renew');
    await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-enc', dataRoot: root }] });
    const r = await run(root);
    try {
      const first = await servedFingerprint(r.ports.live);
      assert.equal(first, new X509Certificate(readFileSync(deviceTlsPaths(root).certPath)).fingerprint256);
      await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-enc', dataRoot: join(scratch.dir, 'renewed') }] });
      for (const f of ['certPath', 'keyPath'] as const) copyFileSync(deviceTlsPaths(join(scratch.dir, 'renewed'))[f], deviceTlsPaths(root)[f]);
      const renewed = new X509Certificate(readFileSync(deviceTlsPaths(root).certPath)).fingerprint256;
      assert.notEqual(renewed, first);
      process.kill(process.pid, 'SIGHUP');
      // The reload reads the files asynchronously: ask again until a new connection gets the renewed one.
      let served = first;
      for (let i = 0; i < 200 && served !== renewed; i++) {
        await sleep(50);
        served = await servedFingerprint(r.ports.live);
      }
      assert.equal(served, renewed);
    } finally {
      await r.stop();
    }
  });

  it('without a certificate: the stream stays on loopback, plain, and the plugin says why', async () => {
    const r = await run(join(scratch.dir, 'no-cert'));
    try {
      assert.equal(encodeState(r).state, 'degraded');
      assert.match(encodeState(r).message ?? '', /serves HTTPS only, and there is no device certificate .*listens on 127\.0\.0\.1 only/);
      assert.deepEqual(r.tlsPorts, []);
      assert.ok(r.ports.live > 0);
    } finally {
      await r.stop();
    }
  });

  it('LIVE_TLS=off: plain HTTP beyond loopback, not announced as TLS', async () => {
    const r = await run(join(scratch.dir, 'cam-enc'), { LIVE_TLS: 'off' });
    try {
      assert.equal(encodeState(r).state, 'ok');
      assert.deepEqual(r.tlsPorts, []);
    } finally {
      await r.stop();
    }
  });
});

describe('helloMessage', () => {
  it("lists the host's TLS surfaces and those plugins announced with tls, once each", () => {
    const identity: DeviceIdentity = {
      deviceId: 'cam-1',
      serial: 's-1',
      fingerprint: () => 'AA:BB',
      certNotAfter: () => null,
      keyDurability: () => ({ durable: true, reason: null }),
      certPath: '/x.crt',
      keyPath: '/x.key',
      labels: ['cam-1'],
      roles: ['camera'],
    };
    const ctx = {
      runtime: { kind: 'device', id: 'cam-1', dataDir: '/tmp', layer: 'layer0', device: { tlsSurfaces: ['tools'] } },
      ports: { announce: () => undefined, all: () => ({ tools: 8765, live: 8766 }), tls: () => ['live', 'tools'] },
    } as unknown as Pick<PluginContext, 'runtime' | 'ports'>;
    assert.deepEqual(helloMessage(ctx, identity).tls, ['tools', 'live']);
  });
});

/** The fingerprint of the certificate a TLS server on 127.0.0.1 presents (not verified: only looked at). */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.once('error', reject);
  });
}

function pathsOf(root: string): { certPath: string; keyPath: string } {
  const { certPath, keyPath } = deviceTlsPaths(root);
  return { certPath, keyPath };
}
