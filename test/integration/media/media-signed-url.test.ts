/**
 * Clips for external players: a hub that asks a bearer token signs a clip URL (POST
 * /media/clips/sign); Debian's Chromium plays it in a plain <video src> (no header can be sent
 * there), ffprobe (the VLC stand-in, a real HTTP client) reads it, Range and HEAD work without the
 * token, and a replica with the same fleet secret accepts it. An expired, tampered or other-clip
 * signature is refused with its JSON error, and Chromium's <video> errors on it. The token is in
 * no URL.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { signedUrlKey, signUrl } from '../../../lib/auth/signed-url.js';
import type { ChunkSidecar } from '../../../core/src/contracts/index.js';
import media from '../../../hub/plugins/media/src/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../../browser/console-fleet.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { makeChunk } from '../../unit/hub/plugins/media/chunk-fixtures.js';
import { api, TEST_FLEET_SECRET, testHub } from '../../support/hub-helpers.js';

const run = promisify(execFile);
const DEVICE = 'cam-signed-1';
const TOKEN = 'signed-url-test-token-3c9e71';

describe('media: signed clip URLs for players without headers', () => {
  let scratch: ScratchDir;
  let hub: RunningHub;
  let replica: RunningHub;
  let browser: Browser;
  let chunk: ChunkSidecar;
  let file: string;

  const sign = async (body: Record<string, unknown>) => api(hub.url, '/media/clips/sign', { json: body, token: TOKEN });

  /** Plays `url` in a plain <video src> of a blank page: frames decoded and time advanced, or the media error. */
  const playInChromium = async (url: string) => {
    const page = await browser.newPage();
    try {
      await page.setContent('<video id="v" muted autoplay playsinline></video>');
      return await page.evaluate(
        (src) =>
          new Promise<{ error: number | null; currentTime: number; frames: number; width: number }>((resolve) => {
            const v = document.getElementById('v') as HTMLVideoElement;
            const done = () =>
              resolve({
                error: v.error ? v.error.code : null,
                currentTime: v.currentTime,
                frames: v.getVideoPlaybackQuality().totalVideoFrames,
                width: v.videoWidth,
              });
            v.addEventListener('error', done);
            v.addEventListener('timeupdate', () => {
              if (v.currentTime > 0.5 && v.getVideoPlaybackQuality().totalVideoFrames > 0) done();
            });
            v.addEventListener('ended', done);
            v.src = src;
            void v.play().catch(() => undefined);
            setTimeout(done, 20_000);
          }),
        url,
      );
    } finally {
      await page.close();
    }
  };

  before(async () => {
    scratch = await scratchDir('media-signed-');
    const rec = join(scratch.dir, 'devices', DEVICE, 'recordings');
    chunk = await makeChunk(rec, { seconds: 2, fps: 10, startedAt: new Date(Date.now() - 60_000), seq: 1, justified: true });
    file = chunk.name.replace('.h265', '.mp4');
    const registryFile = join(scratch.dir, 'registry.json');
    await writeFile(
      registryFile,
      JSON.stringify({ devices: [{ device_id: DEVICE, ips: ['127.0.0.1'], tool_port: await freePort(), labels: ['front_door'] }] }),
    );
    const set = await loadHubPluginSet();
    const plugins = [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'media'), media];
    const options = (name: string) => ({
      registryFile,
      essential: set.essential,
      token: TOKEN,
      host: '127.0.0.1',
      dataDir: join(scratch.dir, name),
      plugins,
      env: { LOOKOUT_MEDIA_LOCAL_RECORDINGS: join(scratch.dir, 'devices', '{device}', 'recordings') },
    });
    hub = await testHub(options('hub'));
    // Another replica (or the same hub after a restart): its own data dir, the fleet's secret.
    replica = await testHub(options('replica'));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await hub?.close();
    await replica?.close();
    await scratch?.cleanup();
  });

  it('signs a clip URL only for a bearer of the token, with exp and sig and never the token', async () => {
    assert.equal((await api(hub.url, '/media/clips/sign', { json: { device: DEVICE, file } })).status, 401);
    assert.equal((await api(hub.url, `/media/clips/${DEVICE}/${file}`)).status, 401, 'the clip itself still needs the token or a signature');
    const r = await sign({ device: DEVICE, file });
    assert.equal(r.status, 200, r.text);
    const url = new URL(r.body.url as string);
    assert.equal(url.origin, hub.url);
    assert.equal(url.pathname, `/media/clips/${DEVICE}/${file}`);
    assert.deepEqual([...url.searchParams.keys()], ['exp', 'sig']);
    assert.match(url.searchParams.get('sig')!, /^[0-9a-f]{64}$/);
    assert.equal(r.body.ttl_s, 3600, 'one hour by default');
    assert.ok(Math.abs(Date.parse(r.body.expires_at as string) - (Date.now() + 3_600_000)) < 60_000);
    assert.ok(!r.text.includes(TOKEN) && !r.text.includes(TEST_FLEET_SECRET), 'neither the token nor the fleet secret is in the answer');
    // Bounded lifetime and checked names.
    assert.equal((await sign({ device: DEVICE, file, ttl_s: 86_401 })).status, 400);
    assert.equal((await sign({ device: DEVICE, file: '../etc/passwd' })).body.error.details.field, 'body.file');
    assert.equal((await sign({ device: 'no-such-cam', file })).status, 404);
  });

  it('plays in Chromium from a plain <video src> with no header', async () => {
    const url = (await sign({ device: DEVICE, file })).body.url as string;
    const played = await playInChromium(url);
    assert.equal(played.error, null, `media error ${played.error}`);
    assert.ok(played.currentTime > 0.5, `currentTime ${played.currentTime}`);
    assert.ok(played.frames > 0, `${played.frames} frames decoded`);
    assert.equal(played.width, 320);
  });

  it('is read by ffprobe, answers Range and HEAD without the token, and opens on a replica with the same fleet secret', async () => {
    const { url, path } = (await sign({ device: DEVICE, file })).body as { url: string; path: string };
    const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,width,height:format=duration', '-of', 'json', url]);
    const info = JSON.parse(probe.stdout) as { streams: { codec_name: string; width: number }[]; format: { duration: string } };
    assert.deepEqual([info.streams[0].codec_name, info.streams[0].width], ['h264', 320]);
    assert.ok(Math.abs(Number(info.format.duration) - 2) < 0.3, `duration ${info.format.duration}`);

    const ranged = await fetch(url, { headers: { Range: 'bytes=0-99' } });
    assert.equal(ranged.status, 206);
    assert.equal((await ranged.arrayBuffer()).byteLength, 100);
    assert.match(ranged.headers.get('content-range') ?? '', /^bytes 0-99\/\d+$/);
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'video/mp4');

    const onReplica = await fetch(replica.url + path);
    assert.equal(onReplica.status, 200);
    await onReplica.arrayBuffer();
  });

  it('refuses an expired, tampered, other-clip or other-route signature with its JSON error, and Chromium cannot play it', async () => {
    const { path } = (await sign({ device: DEVICE, file })).body as { path: string };
    const sig = new URL(path, hub.url).searchParams.get('sig')!;
    const key = signedUrlKey(TEST_FLEET_SECRET);
    const clipPath = `/media/clips/${DEVICE}/${file}`;
    const expired = signUrl(key, clipPath, Date.now() / 1000 - 7200, 3600).path;
    const tooLong = signUrl(key, clipPath, Date.now() / 1000 + 2 * 86_400, 3600).path;
    const tampered = path.replace(/sig=(.)/, (_, c: string) => `sig=${c === '0' ? '1' : '0'}`);
    const laterExp = path.replace(/exp=(\d+)/, (_, e: string) => `exp=${Number(e) + 3600}`);
    const hevc = path.replace('.mp4?', '.hevc.mp4?');
    const refusals: [string, string, number, string][] = [
      ['expired', expired, 401, 'signed_url_expired'],
      ['tampered sig', tampered, 403, 'signed_url_invalid'],
      ['exp moved later', laterExp, 403, 'signed_url_invalid'],
      ['another clip', hevc, 403, 'signed_url_invalid'],
      ['lifetime beyond 24 h', tooLong, 403, 'signed_url_invalid'],
      ['sig without exp', `${clipPath}?sig=${sig}`, 403, 'signed_url_invalid'],
      ['an extra parameter', `${path}&x=1`, 403, 'signed_url_invalid'],
    ];
    for (const [what, p, status, code] of refusals) {
      const r = await api(hub.url, p);
      assert.equal(r.status, status, `${what}: ${r.text}`);
      assert.equal(r.body.error.code, code, what);
      assert.ok(typeof r.body.error.message === 'string' && r.body.error.message.length > 0);
    }
    // Not the token's substitute elsewhere: the same query on another route, or another method, is the bearer rule.
    assert.equal((await api(hub.url, `/fleet/playback-ready?${path.split('?')[1]}`)).status, 401);
    assert.equal((await api(hub.url, path, { method: 'DELETE' })).status, 401);
    // The player sees a failure, not a picture.
    for (const p of [expired, tampered]) {
      const played = await playInChromium(hub.url + p);
      assert.notEqual(played.error, null, `Chromium played ${p}`);
      assert.equal(played.frames, 0);
    }
  });

  it('is in the OpenAPI: the sign route, and exp/sig with the signedUrl scheme and both refusals on the clip route', async () => {
    const doc = (await api(hub.url, '/openapi.json', { token: TOKEN })).body as {
      paths: Record<string, Record<string, { security?: unknown; parameters: { name: string }[]; responses: Record<string, { description: string }> }>>;
      components: { securitySchemes: Record<string, { type: string; in?: string; name?: string }> };
    };
    const clip = doc.paths['/media/clips/{device}/{file}'].get;
    assert.deepEqual(clip.security, [{ bearer: [] }, { signedUrl: [] }]);
    assert.ok(['exp', 'sig'].every((n) => clip.parameters.some((p) => p.name === n)));
    assert.match(clip.responses['401'].description, /signed_url_expired/);
    assert.match(clip.responses['403'].description, /signed_url_invalid/);
    assert.deepEqual([doc.components.securitySchemes.signedUrl.type, doc.components.securitySchemes.signedUrl.in], ['apiKey', 'query']);
    assert.ok(doc.paths['/media/clips/sign'].post, 'POST /media/clips/sign is documented');
  });
});
