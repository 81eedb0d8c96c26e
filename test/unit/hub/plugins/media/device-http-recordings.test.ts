/**
 * The hub's fetch of recording files from a device's tool server (GET /recordings/<file>) against a
 * real tool server on 127.0.0.1 and real files, through a TCP relay that cuts transfers: a cut
 * transfer is resumed by Range; a file replaced between the cut and the resume starts over (If-Range)
 * and never mixes two files; a device that keeps cutting is given up after a bounded number of
 * resumes with nothing left behind; a missing file, a refused token and an unknown device each give
 * their own code.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../../../core/src/log/logger.js';
import { ToolRegistry } from '../../../../../core/src/tools/tool-registry.js';
import { startToolServer, type ToolServer } from '../../../../../edge/src/tool-server.js';
import { DeviceHttpRecordings, RESUMES } from '../../../../../hub/plugins/media/src/device-http-recordings.js';
import type { RegisteredDevice } from '../../../../../hub/plugins/registry/src/service.js';
import { CuttingRelay } from '../../../../support/cutting-relay.js';
import { fleetCaDeviceTls } from '../../../../../lib/tls/device-pin.js';
import { deviceTlsPaths } from '../../../../../lib/tls/tls-paths.js';
import { DeviceHttpsFetch } from '../../../../../hub/plugins/media/src/device-https-fetch.js';
import { provisionTestFleetCerts } from '../../../../support/fleet-certs.js';

const TOKEN = 'device-http-recordings-test-token-0123456789';
const CHUNK = '20260101T120000000Z_000001.h265';

describe('DeviceHttpRecordings: chunks from the device tool server', () => {
  let dir: string;
  let root: string;
  let server: ToolServer;
  let relay: CuttingRelay;
  let access: DeviceHttpRecordings;
  let out: string;
  const chunk = randomBytes(200_000);

  const device = (port: number): RegisteredDevice => ({
    deviceId: 'cam-1',
    ips: ['127.0.0.1'],
    labels: [],
    roles: [],
    ports: null,
    source: 'file',
    namedInFile: true,
    toolUrl: `http://127.0.0.1:${port}/mcp`,
    lastHelloAt: null,
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'device-http-'));
    root = join(dir, 'recordings');
    out = join(dir, 'out');
    mkdirSync(root);
    mkdirSync(out);
    writeFileSync(join(root, CHUNK), chunk);
    server = await startToolServer({
      tools: new ToolRegistry(),
      logger: createLogger({ level: 'silent' }),
      port: 0,
      token: TOKEN,
      recordings: () => ({ root }),
    });
    relay = await CuttingRelay.start(server.port, 20_000);
    access = new DeviceHttpRecordings({ device: (id) => (id === 'cam-1' ? device(relay.port) : undefined), credential: () => TOKEN });
  });
  after(async () => {
    await relay?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('resumes a cut transfer with a Range and gets the whole file', async () => {
    relay.cutsLeft = 2;
    relay.heads.length = 0;
    const to = join(out, 'a.h265');
    assert.deepEqual(await access.download('cam-1', CHUNK, to), { bytes: chunk.length });
    assert.ok(readFileSync(to).equals(chunk));
    // Three requests: the first, then from what each cut left on disk (a Range once something was kept).
    const ranges = relay.ranges();
    assert.equal(ranges.length, 3, JSON.stringify(ranges));
    assert.equal(ranges[0], '');
    assert.match(ranges[2], /^bytes=\d+-$/, JSON.stringify(ranges));
  });

  it('starts over when the file was replaced between the cut and the resume (If-Range), never mixing two files', async () => {
    const replacement = randomBytes(150_000);
    relay.cutsLeft = 1;
    relay.onCut = () => writeFileSync(join(root, CHUNK), replacement);
    try {
      const to = join(out, 'b.h265');
      await access.download('cam-1', CHUNK, to);
      assert.ok(readFileSync(to).equals(replacement));
    } finally {
      relay.onCut = () => undefined;
      writeFileSync(join(root, CHUNK), chunk);
    }
  });

  it('gives up on a device that keeps cutting, leaving no file', async () => {
    relay.cutsLeft = RESUMES + 1;
    const to = join(out, 'c.h265');
    await assert.rejects(access.download('cam-1', CHUNK, to), (err: { code: string }) => err.code === 'recordings_unavailable');
    assert.deepEqual(
      readdirSync(out).filter((n) => n.startsWith('c.')),
      [],
    );
    relay.cutsLeft = 0;
  });

  it('asks a device busy with other transfers (429) again after its Retry-After', async () => {
    const narrow = await startToolServer({
      tools: new ToolRegistry(),
      logger: createLogger({ level: 'silent' }),
      port: 0,
      token: TOKEN,
      recordings: () => ({ root }),
      maxRecordingTransfers: 1,
    });
    const big = '20260101T120500000Z_000005.h265';
    writeFileSync(join(root, big), Buffer.alloc(16 * 1024 * 1024, 1));
    try {
      // A reader that takes nothing holds the one slot until it goes away.
      const held = await new Promise<() => void>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: narrow.port, path: `/recordings/${big}`, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
          res.pause();
          resolve(() => req.destroy());
        });
        req.on('error', () => undefined);
        req.once('error', reject);
        req.end();
      });
      const patient = new DeviceHttpRecordings({ device: () => device(narrow.port), credential: () => TOKEN });
      const to = join(out, 'busy.h265');
      const download = patient.download('cam-1', CHUNK, to);
      setTimeout(held, 300);
      assert.deepEqual(await download, { bytes: chunk.length });
    } finally {
      await narrow.close();
      rmSync(join(root, big), { force: true });
    }
  });

  it('tells a missing file, a refused token and an unknown device apart', async () => {
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (err: { code: string }) => err.code,
      );
    assert.equal(await code(access.download('cam-1', '20260101T125900000Z_000099.h265', join(out, 'd.h265'))), 'recording_not_found');
    const stranger = new DeviceHttpRecordings({ device: () => device(server.port), credential: () => 'not-the-token-of-this-device-00000' });
    assert.equal(await code(stranger.download('cam-1', CHUNK, join(out, 'e.h265'))), 'device_auth_refused');
    assert.equal(await code(access.download('cam-9', CHUNK, join(out, 'f.h265'))), 'target_unknown');
    assert.equal(await code(access.download('cam-1', '../etc/passwd', join(out, 'g.h265'))), 'bad_request');
    assert.equal((await access.read('cam-1', CHUNK, 1_000_000)).length, chunk.length);
    assert.equal(await code(access.read('cam-1', CHUNK, 1000)), 'payload_too_large');
    assert.deepEqual(
      readdirSync(out).filter((n) => /^[d-g]\./.test(n)),
      [],
    );
  });
});

describe('DeviceHttpRecordings over TLS: the device certificate verified against the fleet CA and pinned', () => {
  let dir: string;
  let server: ToolServer;
  let https: DeviceHttpsFetch;
  let fingerprints: Record<string, string>;
  const chunk = randomBytes(100_000);
  const device = (port: number, fingerprint: string | null): RegisteredDevice => ({
    deviceId: 'cam-1',
    ips: ['127.0.0.1'],
    labels: [],
    roles: [],
    ports: null,
    source: 'hello',
    namedInFile: false,
    toolUrl: `https://127.0.0.1:${port}/mcp`,
    tlsFingerprint: fingerprint,
    lastHelloAt: null,
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'device-https-'));
    const root = join(dir, 'recordings');
    mkdirSync(root);
    writeFileSync(join(root, CHUNK), chunk);
    const certs = await provisionTestFleetCerts(join(dir, 'ca'), {
      devices: ['cam-1', 'cam-2'].map((id) => ({ id, dataRoot: join(dir, id) })),
      hubDataDir: join(dir, 'hub'),
    });
    fingerprints = { 'cam-1': certs.device('cam-1').fingerprint, 'cam-2': certs.device('cam-2').fingerprint };
    server = await startToolServer({
      tools: new ToolRegistry(),
      logger: createLogger({ level: 'silent' }),
      port: 0,
      token: TOKEN,
      recordings: () => ({ root }),
      tls: { ...deviceTlsPaths(join(dir, 'cam-1')), reloadOnSighup: false },
    });
    https = new DeviceHttpsFetch(fleetCaDeviceTls(certs.hub().caPath));
  });
  after(async () => {
    https?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('downloads from the device presenting the certificate it announced', async () => {
    const access = new DeviceHttpRecordings({ device: () => device(server.port, fingerprints['cam-1']), credential: () => TOKEN, https });
    const to = join(dir, 'ok.h265');
    assert.deepEqual(await access.download('cam-1', CHUNK, to), { bytes: chunk.length });
    assert.ok(readFileSync(to).equals(chunk));
  });

  it('refuses a certificate other than the announced one (device_tls_mismatch), leaving no file', async () => {
    const access = new DeviceHttpRecordings({ device: () => device(server.port, fingerprints['cam-2']), credential: () => TOKEN, https });
    await assert.rejects(access.download('cam-1', CHUNK, join(dir, 'no.h265')), (err: { code: string; details: { reason: string } }) => {
      assert.equal(err.code, 'device_tls_mismatch');
      assert.equal(err.details.reason, 'fingerprint_mismatch');
      return true;
    });
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.startsWith('no.')),
      [],
    );
  });
});
