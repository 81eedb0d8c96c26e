/**
 * The fleet console in Debian's chromium (playwright-core), against a hub that asks a token and two
 * real simulated devices: the token login, the fleet view with every device, a card turning offline
 * without reload when its device stops, live video through MSE, detection boxes where the
 * detections are, a clip that plays, a tool call from the form, the debug tail, the disconnected
 * indicator and a phone's width. Screenshots of each view go to the artifacts folder.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { boxOnPicture, detectorFrameOf } from '../../core/src/contracts/detection-frame.js';
import { api, callTool, waitFor } from '../support/hub-helpers.js';
import { SseReader } from '../unit/hub/plugins/fleet-events/sse-reader.js';
import { artifactsDir, DEVICES, HUB_TOKEN, launchChromium, startConsoleFleet, type ConsoleFleet } from './console-fleet.js';

describe('fleet console in chromium', () => {
  let fleet: ConsoleFleet;
  let browser: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const shots = artifactsDir();
  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const [front, lobby] = DEVICES;

  before(async () => {
    fleet = await startConsoleFleet();
    browser = await launchChromium(fleet.dir);
    page = await browser.newPage();
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    // The page loads nothing from another origin (no CDN): every request is the hub's or the page's own blob.
    page.on('request', (r) => {
      if (!r.url().startsWith(fleet.hub.url) && !/^(blob|data):/.test(r.url())) pageErrors.push(`request to another origin: ${r.url()}`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) pageErrors.push(m.text());
    });
  });

  after(async () => {
    await browser?.close();
    await fleet?.close();
  });

  it('asks for the token, refuses a wrong one, and keeps the right one out of URLs and out of storage in clear', async () => {
    await page.goto(fleet.hub.url + '/');
    await page.getByTestId('login-form').waitFor();
    await shot('login');
    await page.locator('input[name=token]').fill('not-the-token-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The hub refused this token.').waitFor();
    await page.locator('input[name=token]').fill(HUB_TOKEN);
    await page.getByLabel('Keep it for this tab (encrypted)').check();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('fleet-summary').waitFor();
    const stored = await page.evaluate(() => ({
      url: location.href,
      local: JSON.stringify(localStorage),
      session: JSON.stringify(sessionStorage),
      cookie: document.cookie,
    }));
    for (const [where, text] of Object.entries(stored)) assert.ok(!text.includes(HUB_TOKEN), `the token is in ${where} in clear`);
    assert.match(stored.session, /lookout\.token\.sealed/, 'kept for the tab, sealed');
    // A reload opens the sealed token: no second login.
    await page.reload();
    await page.getByTestId('fleet-summary').waitFor();
  });

  it('shows every device as a card, with its thumbnail, facts and the readiness summary; filters by role and state', async () => {
    await page.goto(fleet.hub.url + '/#/');
    for (const d of DEVICES) {
      const card = page.locator(`[data-testid=device-card][data-device="${d.id}"]`);
      await card.waitFor();
      assert.equal(await card.getAttribute('data-presence'), 'online');
      await card.getByText(d.role, { exact: true }).waitFor();
      await card.getByText(/^layer2/).waitFor();
      await card.locator('img.thumb').waitFor({ timeout: 20_000 });
      assert.ok((await card.locator('img.thumb').evaluate((img: HTMLImageElement) => img.naturalWidth)) > 0, 'the thumbnail is a picture');
    }
    await page.getByTestId('connection').and(page.locator('[data-state=live]')).waitFor();
    await fleetValidated();
    await page.waitForFunction(
      () =>
        document.querySelectorAll('[data-testid=grade]').length === 2 &&
        [...document.querySelectorAll('[data-testid=grade]')].every((g) => g.textContent !== '—'),
    );
    await page.getByTestId('filter-role').selectOption(lobby.role);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=device-card]').length === 1);
    assert.equal(await page.locator('[data-testid=device-card]').getAttribute('data-device'), lobby.id);
    await page.getByTestId('filter-role').selectOption('');
    await page.getByTestId('filter-state').selectOption('offline');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=device-card]').length === 0);
    await page.getByTestId('filter-state').selectOption('');
    await shot('fleet');
  });

  it('plays the live view (H.264 remuxed into fragmented MP4, through MSE)', async () => {
    await page.goto(`${fleet.hub.url}/#/device/${front.id}`);
    const video = page.getByTestId('live-video');
    await page.getByTestId('live-state').and(page.getByText('playing')).waitFor({ timeout: 20_000 });
    const t0 = await video.evaluate((v: HTMLVideoElement) => v.currentTime);
    await page.waitForFunction((t) => (document.querySelector('[data-testid=live-video]') as HTMLVideoElement).currentTime > t + 1, t0, { timeout: 15_000 });
    const size = await video.evaluate((v: HTMLVideoElement) => [v.videoWidth, v.videoHeight]);
    assert.deepEqual(size, [320, 240]);
  });

  it('draws the detections as boxes with class labels and track ids where they are on the snapshot', async () => {
    // The capture time of each snapshot the page receives: its boxes must be the dets of that instant.
    const snapshotTimes: (string | null)[] = [];
    const snapshotLog: string[] = [];
    const onResponse = (r: Response) => {
      if (r.url().includes('/stream/snapshot') && r.url().includes(front.id)) {
        snapshotTimes.push(r.headers()['x-lookout-captured-at'] ?? null);
        snapshotLog.push(`${new Date().toISOString()} ${r.headers()['x-lookout-snapshot-source']} ${r.headers()['x-lookout-captured-at']} ${r.url()}`);
      }
    };
    page.on('response', onResponse);
    // The detections the hub streams, read beside the page: the boxes must be these numbers.
    const reader = new SseReader(`${fleet.hub.url}/fleet/events?device=${front.id}&kind=dets`, { authorization: `Bearer ${HUB_TOKEN}` });
    try {
      await reader.next('dets', () => true, 15_000);
      // A fresh document: the page's detections are those of its own stream, which the reader sees too.
      await page.goto(`${fleet.hub.url}/#/device/${front.id}`);
      await page.reload();
      await page.getByTestId('snapshot').waitFor({ timeout: 20_000 });
      const snapshotStage = page.locator('.stage').filter({ has: page.getByTestId('snapshot') });
      let boxes = await snapshotStage.locator('[data-testid=det-box]').count();
      for (let i = 0; boxes === 0 && i < 10; i++) {
        await page.getByTestId('snapshot-refresh').click();
        await page.waitForTimeout(1000);
        boxes = await snapshotStage.locator('[data-testid=det-box]').count();
      }
      assert.ok(boxes > 0, 'a snapshot with detections');
      const readDrawn = () =>
        snapshotStage.evaluate((stage) => {
          const picture = stage.querySelector('img')!;
          const img = picture.getBoundingClientRect();
          return [...stage.querySelectorAll('[data-testid=det-box]')].map((g) => {
            const r = g.querySelector('rect')!;
            const box = r.getBoundingClientRect();
            return {
              b: ['x', 'y', 'width', 'height'].map((a) => Number(r.getAttribute(a))),
              label: g.querySelector('text')!.textContent,
              track: g.getAttribute('data-track'),
              screen: { x: box.x - img.x, y: box.y - img.y, w: box.width, h: box.height },
              img: { w: img.width, h: img.height },
              natural: { width: picture.naturalWidth, height: picture.naturalHeight },
            };
          });
        });
      type Streamed = { dets: { b: number[]; track_id?: number }[]; captured_at?: string; frame_width?: number; frame_height?: number };
      const near = (a: number, b: number) => Math.abs(a - b) < 1e-6;
      // What the page draws against what the hub streamed. The page pairs again as each dets arrives: the
      // dets of the picture's instant may reach it a moment after the picture, so the check is repeated for a few seconds.
      const compare = async () => {
        const drawn = await readDrawn();
        const messages = reader.events.filter((e) => e.event === 'dets').map((e) => JSON.parse(e.data) as Streamed);
        // The boxes are drawn in the picture's pixels, placed by core's rule from the message's detector frame.
        const onPicture = (m: Streamed): number[][] => m.dets.map((d) => boxOnPicture(d.b, detectorFrameOf(m), drawn[0].natural));
        const matched = messages.find(
          (m) => m.dets.length === drawn.length && onPicture(m).every((b, i) => near(b[0], drawn[i].b[0]) && near(b[1], drawn[i].b[1])),
        );
        // The picture on screen says its capture time (the header it came with): the last answer the page
        // got need not be the picture it shows, if a later take's answer came first.
        const shownAt = await snapshotStage.locator('img').getAttribute('data-captured-at');
        const pictureAt = Date.parse(shownAt ?? '');
        const nearest = messages.reduce((a, b) =>
          Math.abs(Date.parse(b.captured_at!) - pictureAt) < Math.abs(Date.parse(a.captured_at!) - pictureAt) ? b : a,
        );
        return { drawn, matched, match: matched?.dets, pictureAt, nearest, onPicture, shownAt, messages };
      };
      const settle = async () => {
        let seen = await compare();
        for (const until = Date.now() + 5_000; Date.now() < until && (seen.drawn.length === 0 || seen.nearest.dets !== seen.match);) {
          await page.waitForTimeout(200);
          seen = await compare();
        }
        return seen;
      };
      // The sim clip loops every 12 s and its walkers jump back to where they started: a picture taken
      // between the last dets before the jump and the first after it may be paired, rightly by time, with
      // dets of the other side (the red walker 500 px away), so that picture is not held to its figures
      // and another is taken. Told from the stream: the red walker, the tallest box, only walks right.
      const acrossLoop = (pictureAt: number): boolean => {
        const messages = reader.events.filter((e) => e.event === 'dets').map((e) => JSON.parse(e.data) as Streamed);
        const at = (m: Streamed) => Date.parse(m.captured_at!);
        const before = messages.filter((m) => at(m) <= pictureAt && m.dets.length > 0).at(-1);
        const after = messages.find((m) => at(m) > pictureAt && m.dets.length > 0);
        const redX = (m: Streamed) => m.dets.reduce((a, b) => (b.b[3] - b.b[1] > a.b[3] - a.b[1] ? b : a)).b[0];
        return before !== undefined && after !== undefined && redX(after) < redX(before) - 100;
      };
      // The IoU bound below takes the dets at most 100 ms from the picture; a loaded detector skips frames
      // (400 ms between two dets at times), and then a nearer picture is taken.
      const apartMs = (seen: { nearest: Streamed; pictureAt: number }) => Math.abs(Date.parse(seen.nearest.captured_at!) - seen.pictureAt);
      const retake = async () => {
        const taken = snapshotTimes.length;
        await page.getByTestId('snapshot-refresh').click();
        await waitFor(
          'another snapshot on screen',
          async () => snapshotTimes.length > taken && (await snapshotStage.locator('img').getAttribute('data-captured-at')) === snapshotTimes.at(-1),
          20_000,
          100,
        );
      };
      const shownNow = () => snapshotStage.locator('img').getAttribute('data-captured-at');
      // Snapshots in flight (the page's own retake, a click) may replace the picture under the test: the page says so.
      const quiet = () => page.locator('[data-testid=snapshot-refresh][data-busy=false]').waitFor({ timeout: 30_000 });
      const busy = async () => (await page.getByTestId('snapshot-refresh').getAttribute('data-busy')) === 'true';
      await quiet();
      let seen = await settle();
      for (let i = 0; i < 5 && (acrossLoop(seen.pictureAt) || apartMs(seen) > 120); i++) {
        await retake();
        seen = await settle();
      }
      // Held still: no snapshot on its way that could replace the picture between the boxes and the pixels read.
      for (let i = 0; i < 5 && ((await busy()) || (await shownNow()) !== seen.shownAt); i++) {
        await quiet();
        seen = await settle();
      }
      const { drawn, matched, match, pictureAt, nearest, onPicture } = seen;
      assert.ok(matched && match, `the boxes ${JSON.stringify(drawn.map((d) => d.b))} are one of the streamed detections`);
      // They are the dets of the picture's instant (captured_at nearest the snapshot's), not the newest ones.
      assert.ok(!Number.isNaN(pictureAt), `the snapshot says when it was captured: ${JSON.stringify(snapshotLog)}`);
      assert.ok(snapshotTimes.includes(seen.shownAt), `the picture shown is one the hub sent: ${seen.shownAt} of ${JSON.stringify(snapshotLog)}`);
      assert.equal(
        nearest.dets,
        match,
        `drawn: the dets captured ${matched.captured_at}, nearest the picture of ${seen.shownAt} those of ${nearest.captured_at}; snapshots ${JSON.stringify(snapshotLog)}; dets ${JSON.stringify(seen.messages.map((m) => m.captured_at))}`,
      );
      assert.deepEqual([nearest.frame_width, nearest.frame_height], [640, 640]);
      // And they sit on the figures the picture shows: each walker's pixels (its colour) against the box drawn nearest it.
      const figures = await snapshotStage.evaluate((stage, colours) => {
        const img = stage.querySelector('img')!;
        const canvas = document.createElement('canvas');
        [canvas.width, canvas.height] = [img.naturalWidth, img.naturalHeight];
        const g = canvas.getContext('2d')!;
        g.drawImage(img, 0, 0);
        const px = g.getImageData(0, 0, canvas.width, canvas.height).data;
        const r = img.getBoundingClientRect();
        return colours.map(([cr, cg, cb]) => {
          let [x1, y1, x2, y2, n] = [Infinity, Infinity, -1, -1, 0];
          for (let y = 0; y < canvas.height; y++)
            for (let x = 0; x < canvas.width; x++) {
              const i = (y * canvas.width + x) * 4;
              if (Math.abs(px[i] - cr) + Math.abs(px[i + 1] - cg) + Math.abs(px[i + 2] - cb) > 60) continue;
              [x1, y1, x2, y2, n] = [Math.min(x1, x), Math.min(y1, y), Math.max(x2, x + 1), Math.max(y2, y + 1), n + 1];
            }
          const sx = r.width / canvas.width;
          const sy = r.height / canvas.height;
          return { n, x: x1 * sx, y: y1 * sy, w: (x2 - x1) * sx, h: (y2 - y1) * sy };
        });
      }, WALKER_COLOURS);
      assert.equal(await shownNow(), seen.shownAt, 'the figures are read on the picture whose boxes were checked');
      // The red walker is always the nearer one; the purple one, partly behind it while they cross, shows
      // less than its box, so it is compared only when clear of the red one. Clear in the dets' frame too:
      // that frame is up to 100 ms from the picture, the walkers close 90 px a second of the 640-px frame,
      // and a partly hidden walker may be missed (the sim detector's visibility rule, as a real one would).
      const [red, purple] = figures;
      assert.ok(red.n >= 40, `the red walker is on the picture: ${JSON.stringify(figures)}`);
      const apartS = Math.abs(Date.parse(nearest.captured_at!) - pictureAt) / 1000;
      const margin = 2 + apartS * 90 * (drawn[0].img.w / 640);
      const clear = [red, ...(purple.n >= 40 && screenGap(red, purple) >= margin ? [purple] : [])];
      const said = `the dets captured ${nearest.captured_at} (${match.length} boxes) for the picture of ${seen.shownAt}`;
      for (const f of clear) {
        const best = Math.max(...drawn.map((d) => screenIou(d.screen, f)));
        // Not 0.9 here: the hub streams dets 5 times a second, so the nearest frame may be 100 ms from the
        // picture (4 px at these walkers' pace), the sim detector jitters boxes by 2 px and the JPEG's
        // colours bleed a pixel or two (a loaded run measured 0.59 for a box 6 px off); which dets are
        // drawn is held exactly above, and the device test (boxes-on-snapshot) holds the chain to 0.9.
        console.log(`figure ${JSON.stringify(f)}: best IoU ${best.toFixed(3)} of the drawn boxes`);
        assert.ok(
          best >= 0.5,
          `a box on the figure at ${JSON.stringify(f)}: best IoU ${best.toFixed(2)} among ${JSON.stringify(drawn.map((d) => d.screen))}, ${said}`,
        );
      }
      for (const [i, d] of drawn.entries()) {
        const det: { b: number[]; track_id?: number } = match[i];
        const [x1, y1, x2, y2]: number[] = onPicture(matched)[i];
        assert.deepEqual(
          d.b.map((v) => Math.round(v * 1000)),
          [x1, y1, x2 - x1, y2 - y1].map((v) => Math.round(v * 1000)),
        );
        // On screen: the detector frame (640×640) stretched over the picture, within a pixel and a half.
        const sx = d.img.w / 640;
        const sy = d.img.h / 640;
        assert.ok(Math.abs(d.screen.x - det.b[0] * sx) < 1.5 && Math.abs(d.screen.y - det.b[1] * sy) < 1.5, JSON.stringify(d));
        assert.ok(Math.abs(d.screen.w - (det.b[2] - det.b[0]) * sx) < 1.5 && Math.abs(d.screen.h - (det.b[3] - det.b[1]) * sy) < 1.5, JSON.stringify(d));
        if (det.track_id !== undefined) {
          assert.equal(d.track, String(det.track_id));
          assert.ok(d.label.includes(`#${det.track_id}`), d.label);
        }
      }
      assert.ok(
        drawn.some((d) => d.label.startsWith('person')),
        drawn.map((d) => d.label).join(', '),
      );
      await shot('device');
    } finally {
      page.off('response', onResponse);
      await reader.close();
    }
  });

  it('plots the last hour from the history ring, recording status, storage and plugin states', async () => {
    const stream = (match: (q: URLSearchParams) => boolean) =>
      page.waitForRequest((r) => new URL(r.url()).pathname === '/fleet/events' && match(new URL(r.url()).searchParams), { timeout: 20_000 });
    const fleetStream = stream((q) => q.get('device') === null);
    const plotsStream = stream((q) => q.get('device') === front.id && q.get('kind') === 'sample');
    await page.goto(`${fleet.hub.url}/#/device/${front.id}`);
    // A page load of its own (from another view the goto above only changes the hash): its streams are asked anew.
    await page.reload();
    // The history samples come on the plots' own stream of this device; the page's fleet stream
    // (half its events at 1 000 devices were samples nobody drew) leaves them out.
    const fleetKinds = new URL((await fleetStream).url()).searchParams.get('kind');
    assert.ok(
      fleetKinds?.split(',').includes('device') && !fleetKinds.split(',').includes('sample'),
      `the fleet stream asks ${fleetKinds ?? 'the default kinds'}`,
    );
    await plotsStream;
    await page.waitForFunction(
      () => {
        const charts = [...document.querySelectorAll('[data-testid=chart]')];
        return charts.length === 3 && charts.every((c) => Number(c.getAttribute('data-points')) >= 2);
      },
      undefined,
      {
        timeout: 20_000,
      },
    );
    assert.equal((await page.locator('[data-testid=chart] canvas').count()) >= 3, true);
    await page.getByTestId('recorder-status').and(page.getByText('recording')).waitFor({ timeout: 20_000 });
    await page.getByTestId('plugins').getByText('recorder').waitFor();
    await page.getByTestId('plugins').getByText('tracker').waitFor();
  });

  it('plays a recent clip, with justified clips marked', async () => {
    await page.goto(`${fleet.hub.url}/#/device/${front.id}`);
    const clip = page.getByTestId('clip').first();
    for (let i = 0; i < 20 && !(await clip.isVisible()); i++) {
      await page.getByRole('button', { name: 'refresh' }).click();
      await page.waitForTimeout(1000);
    }
    await clip.waitFor();
    const justified = await page.locator('[data-testid=clip][data-justified=true]').count();
    assert.equal(await page.locator('[data-testid=clip] .badge').count(), justified, 'every justified clip, and only they, marked');
    await clip.getByTestId('play-clip').click();
    const player = page.getByTestId('clip-player');
    await player.waitFor({ timeout: 30_000 });
    // It plays: half a second of it, or all of it when the clip is shorter. The newest clip can be a
    // short chunk (0.2 s long in three runs in a row, which then waited for 0.5 s that never came).
    await page.waitForFunction(
      () => {
        const v = document.querySelector('[data-testid=clip-player]') as HTMLVideoElement;
        return v.currentTime > 0.5 || (v.ended && v.duration > 0 && v.currentTime >= v.duration - 0.05);
      },
      undefined,
      { timeout: 20_000 },
    );
    await shot('device-clip');
  });

  it('calls a tool from the form, validates arguments against the tool’s schema, and shows the result', async () => {
    await page.goto(`${fleet.hub.url}/#/device/${front.id}`);
    const form = page.getByTestId('tool-form');
    await page.waitForFunction(() => (document.querySelector('[data-testid=tool-select]') as HTMLSelectElement).options.length > 3);
    await form.getByTestId('tool-select').selectOption('get_latest_dets');
    await form.getByTestId('tool-submit').click();
    const result = page.getByTestId('tool-result');
    await result.waitFor();
    assert.equal(await result.getAttribute('data-status'), 'ok');
    const body = JSON.parse((await result.textContent()) ?? '');
    assert.equal(typeof body.person_count, 'number');
    assert.ok(Array.isArray(body.dets));
    // list_recording_chunks takes a limit: a word is refused in the page, before any call.
    await form.getByTestId('tool-select').selectOption('list_recording_chunks');
    const schema = await page.evaluate(async (token) => {
      const r = await fetch(`/tools/list?target=cam-front`, { headers: { authorization: `Bearer ${token}` } });
      return ((await r.json()) as { tools: { name: string; inputSchema: { properties: Record<string, unknown> } }[] }).tools.find(
        (t) => t.name === 'list_recording_chunks',
      )!.inputSchema;
    }, HUB_TOKEN);
    const numeric = Object.entries(schema.properties).find(([, s]) => ['integer', 'number'].includes((s as { type?: string }).type ?? ''));
    assert.ok(numeric, JSON.stringify(schema));
    await form.locator(`[name="${numeric[0]}"]`).fill('-5');
    await form.getByTestId('tool-submit').click();
    await page.getByTestId('tool-errors').waitFor();
    assert.equal(await result.count(), 0, 'no call with arguments the schema refuses');
    await form.locator(`[name="${numeric[0]}"]`).fill('2');
    await form.getByTestId('tool-submit').click();
    await result.waitFor();
    assert.equal(await result.getAttribute('data-status'), 'ok', (await result.textContent()) ?? '');
    await shot('device-tool');
  });

  it('tails the debug ring live, filtered by device and kind', async () => {
    await page.goto(`${fleet.hub.url}/#/debug`);
    await page.getByTestId('debug-device').selectOption(lobby.id);
    await page.waitForFunction(() => (document.querySelector('[data-testid=debug-kind]') as HTMLSelectElement).options.length > 2);
    await page.getByTestId('debug-kind').selectOption('tool_call');
    const before = await page.locator('[data-testid=debug-tail] li').count();
    // A tool call now: its ring event arrives through the event stream, no reload.
    assert.equal((await callTool(fleet.hub.url, lobby.id, 'get_latest_dets', {}, HUB_TOKEN)).status, 200);
    await callTool(fleet.hub.url, front.id, 'get_latest_dets', {}, HUB_TOKEN);
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=debug-tail] li').length > n, before, { timeout: 10_000 });
    const rows = await page
      .locator('[data-testid=debug-tail] li')
      .evaluateAll((lis) => lis.map((li) => [li.getAttribute('data-kind'), li.getAttribute('data-device')]));
    assert.ok(
      rows.every(([k, d]) => k === 'tool_call' && d === 'cam-lobby'),
      JSON.stringify(rows),
    );
    await shot('debug');
  });

  it('turns a stopped device’s card offline within seconds, without a reload', async () => {
    await page.goto(`${fleet.hub.url}/#/`);
    const card = page.locator(`[data-testid=device-card][data-device="${lobby.id}"]`);
    await card.and(page.locator('[data-presence=online]')).waitFor();
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
    const stoppedAt = Date.now();
    await fleet.devices.get(lobby.id)!.stop();
    await card.and(page.locator('[data-presence=offline]')).waitFor({ timeout: 10_000 });
    const seconds = (Date.now() - stoppedAt) / 1000;
    assert.equal(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument), true, 'the page was not reloaded');
    await card.getByText('offline since').waitFor();
    await shot('fleet-offline');
    console.log(`card offline ${seconds.toFixed(1)} s after the device was stopped`);
  });

  it('shows when the event stream is disconnected, and reconnects by itself', async () => {
    await page.goto(`${fleet.hub.url}/#/`);
    const badge = page.getByTestId('connection');
    await badge.and(page.locator('[data-state=live]')).waitFor();
    await browser.setOffline(true);
    await badge.and(page.locator('[data-state=reconnecting]')).waitFor({ timeout: 10_000 });
    await shot('disconnected');
    await browser.setOffline(false);
    await badge.and(page.locator('[data-state=live]')).waitFor({ timeout: 20_000 });
  });

  it('has no horizontal scroll at a phone’s width (390 px) in every view', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, hash, ready] of [
      ['phone-fleet', '#/', 'fleet-summary'],
      ['phone-device', `#/device/${front.id}`, 'tool-form'],
      ['phone-debug', '#/debug', 'debug-tail'],
    ] as const) {
      await page.goto(`${fleet.hub.url}/${hash}`);
      await page.getByTestId(ready).waitFor();
      await page.waitForTimeout(500);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `${name}: the page is ${width} px wide`);
      await shot(name);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('ran without script errors and without a request to another origin', () => {
    assert.deepEqual(pageErrors, []);
  });

  async function fleetValidated(): Promise<void> {
    const r = await api(fleet.hub.url, '/fleet/validate', { method: 'POST', token: HUB_TOKEN });
    assert.equal(r.status, 200, r.text);
  }
});

/** The people-crossing walkers' colours (configs/scenarios/people-crossing.json), RGB. */
const WALKER_COLOURS: [number, number, number][] = [
  [0xd9, 0x48, 0x2b],
  [0x8e, 0x24, 0xaa],
];

/** The horizontal space between two figures, negative where they overlap. */
function screenGap(a: { x: number; w: number }, b: { x: number; w: number }): number {
  return Math.max(b.x - (a.x + a.w), a.x - (b.x + b.w));
}

function screenIou(a: { x: number; y: number; w: number; h: number }, b: { x: number; y: number; w: number; h: number }): number {
  const iw = Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x));
  const ih = Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));
  const union = a.w * a.h + b.w * b.h - iw * ih;
  return union > 0 ? (iw * ih) / union : 0;
}
