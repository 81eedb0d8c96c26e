/**
 * The console's live view draws the detections of the picture on screen, in Debian's chromium
 * (playwright-core): a camera (the project's RTSP server, with its RTCP sender reports) whose
 * pictures are each one flat grey that tells which picture it is, a real hub with the console, and
 * dets messages on the bus for every picture with its capture time (captured_at) and a box whose
 * track id is the picture's number, published a second ahead of the pictures (so the newest
 * message is never the one of the picture shown). What the page shows is read off the screen: the
 * grey of the video's current picture beside the track ids of the boxes drawn over it. Every fifth
 * picture's dets carry a capture time 60 ms off (more than half a frame): that picture must show no
 * boxes rather than another picture's.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { api, endClient, mqttClient, msg, publish, testHub, waitFor } from '../support/hub-helpers.js';
import { consolePluginSet, HUB_TOKEN, launchChromium, signIn } from './console-fleet.js';
import { pictureOfGrey, startJitteryCamera, type JitteryCamera } from './jittery-camera.js';

const FPS = 10;
/** Pictures in the camera's loop: the grey tells the picture's number modulo this. */
const LOOP = FPS * 4;
const DEVICE = 'cam-boxes';
/** Pictures ahead of the camera the dets are published. */
const AHEAD = FPS;
/** Every picture with this remainder (mod 5) gets dets captured this far off its own time. */
const OFF_REMAINDER = 2;
const OFF_MS = 60;
/** Seconds of the screen read. */
const WATCH_S = 6;

type MqttClient = Awaited<ReturnType<typeof mqttClient>>;

describe('the console’s live view draws the boxes of the picture on screen', () => {
  let dir: string;
  let hub: RunningHub;
  let camera: JitteryCamera;
  let browser: BrowserContext;
  let bus: MqttClient;
  let publisher: NodeJS.Timeout | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'live-boxes-'));
    camera = await startJitteryCamera(FPS, 0, { numbered: true });
    hub = await testHub({
      ...(await consolePluginSet()),
      token: HUB_TOKEN,
      host: '127.0.0.1',
      // Every dets message to the page (the default thins them to 5 a second).
      env: { READINESS_START_DELAY_MS: '600000', LOOKOUT_EVENTS_DETS_INTERVAL_MS: '0' },
    });
    bus = await mqttClient(hub.brokerUrl);
    await publish(bus, `devices/${DEVICE}/hello`, { ...msg.hello(DEVICE, ['127.0.0.1'], 9), ports: { tools: 9, rtsp: camera.port } });
    await waitFor('the camera’s hello in the registry', async () => {
      const r = await api(hub.url, `/fleet/registry?device=${DEVICE}`, { token: HUB_TOKEN });
      return r.body.shadows?.[0]?.ports?.rtsp === camera.port;
    });
    // Each picture's dets, once, AHEAD pictures before the camera makes it.
    let published = -1;
    publisher = setInterval(() => {
      for (; published < camera.index + AHEAD;) {
        const n = ++published;
        const off = n % 5 === OFF_REMAINDER ? OFF_MS : 0;
        const track = n % LOOP;
        void publish(bus, `devices/${DEVICE}/dets`, {
          ...msg.dets(1, track),
          dets: [{ c: 0, p: 0.9, b: [40 + track, 40, 200, 200], track_id: track }],
          captured_at: new Date(camera.captureTimeOf(n) + off).toISOString(),
          frame_width: 320,
          frame_height: 240,
        }).catch(() => undefined);
      }
    }, 50);
    browser = await launchChromium(dir);
  });

  after(async () => {
    clearInterval(publisher);
    await browser?.close();
    if (bus) await endClient(bus);
    await hub?.close();
    await camera?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('each picture gets the boxes whose captured_at is its capture time, and none where no dets are within half a frame', async () => {
    const page = await browser.newPage();
    try {
      await signIn(page, hub.url);
      await page.goto(`${hub.url}/#/device/${DEVICE}`);
      await page.getByTestId('live-state').and(page.getByText('playing')).waitFor({ timeout: 30_000 });
      await page.locator('.stage [data-testid=det-box]').first().waitFor({ timeout: 30_000 });
      // The screen, read twice 15 ms apart each time: a reading counts when both agree (not caught mid-change).
      const readings = await page.evaluate(async (seconds) => {
        const video = document.querySelector('[data-testid=live-video]') as HTMLVideoElement;
        const stage = video.parentElement!;
        const canvas = document.createElement('canvas');
        [canvas.width, canvas.height] = [video.videoWidth, video.videoHeight];
        const g = canvas.getContext('2d', { willReadFrequently: true })!;
        const read = () => {
          g.drawImage(video, 0, 0);
          const grey = g.getImageData(canvas.width >> 1, canvas.height >> 1, 1, 1).data[0];
          const tracks = [...stage.querySelectorAll('[data-testid=det-box]')].map((b) => Number(b.getAttribute('data-track')));
          return { grey, tracks: tracks.join(',') };
        };
        const out: { grey: number; tracks: string }[] = [];
        const end = performance.now() + seconds * 1000;
        while (performance.now() < end) {
          const a = read();
          await new Promise((r) => setTimeout(r, 15));
          const b = read();
          if (Math.abs(a.grey - b.grey) <= 2 && a.tracks === b.tracks) out.push(a);
          await new Promise((r) => setTimeout(r, 20));
        }
        return out;
      }, WATCH_S);
      let right = 0;
      let wrong = 0;
      const samples: string[] = [];
      for (const { grey, tracks } of readings) {
        const n = pictureOfGrey(grey);
        const expected = n % 5 === OFF_REMAINDER ? '' : String(n);
        if (tracks === expected) right++;
        else wrong++;
        if (samples.length < 30) samples.push(`${n}:${tracks || '-'}`);
      }
      const line = `${right} of ${right + wrong} readings show the boxes of the picture on screen (picture:tracks drawn ${samples.join(' ')})`;
      console.log(`# ${line}`);
      assert.ok(right + wrong >= 30, `too few steady readings: ${line}`);
      // A reading may still catch the picture and its boxes a frame apart now and then; a pairing by
      // arrival (the newest dets, a second ahead) gets none right, a pairing a frame off none either.
      assert.ok(right >= 0.9 * (right + wrong), line);
    } finally {
      await page.close();
    }
  });
});
