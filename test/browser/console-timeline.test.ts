/**
 * The device timeline in Debian's chromium, against the browser tests' hub and real simulated
 * devices: an incident the test publishes (as the device, on its events topic) appears on the strip at
 * its time, stays there after a reload (read back from the hub's ring), and a click on it plays the
 * recorded chunk holding that moment from that moment, its frames decoded and advancing.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { MqttClient } from 'mqtt';
import { api, endClient, publish, waitFor } from '../support/hub-helpers.js';
import { artifactsDir, DEVICES, HUB_TOKEN, hubBusClient, openConsole, startConsoleFleet, type ConsoleFleet } from './console-fleet.js';

/** A chunk as GET /fleet/playback-ready lists it (the recorder's sidecar fields). */
interface Listed {
  name: string;
  started_at: string;
  /** Wall time: the last picture's capture plus a frame. */
  ended_at: string;
  /** Media time: fewer pictures than the span at the encoder's rate when some were dropped. */
  duration_s: number;
}

/** The chunk's wall span holds the moment, or the moment is in the small hole just before it. */
function holds(c: Listed, momentMs: number): boolean {
  return momentMs >= Date.parse(c.started_at) - 1500 && momentMs < Date.parse(c.ended_at);
}

describe('device timeline in chromium', () => {
  let fleet: ConsoleFleet;
  let browser: BrowserContext;
  let page: Page;
  let bus: MqttClient;
  let pageErrors: string[] = [];
  const [front] = DEVICES;

  before(async () => {
    fleet = await startConsoleFleet();
    // The device's own bus identity is held by the running device (its client id is its id): the event goes
    // in as the hub's identity, which may publish on any device topic, under a client id of its own.
    bus = await hubBusClient(fleet.hub, 'console-timeline-test');
    ({ browser, page, pageErrors } = await openConsole(fleet.dir, fleet.hub.url));
  });

  after(async () => {
    await browser?.close();
    if (bus) await endClient(bus);
    await fleet?.close();
  });

  it('marks a published incident at its time; a click plays the chunk holding it from that moment', async () => {
    // The recorder has chunks: the incident's own will follow.
    await waitFor(
      'a recorded chunk of the device',
      async () =>
        (await api(fleet.hub.url, `/fleet/playback-ready?shadow=${front.id}`, { token: HUB_TOKEN })).body.recent_chunks?.some(
          (c: { device_id: string }) => c.device_id === front.id,
        ),
      60_000,
      500,
    );
    await page.goto(`${fleet.hub.url}/#/device/${front.id}`);
    await page.getByTestId('timeline').waitFor();
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=timeline-counts]')?.getAttribute('data-points')) >= 2, undefined, {
      timeout: 30_000,
    });
    // The page's live stream is open before the incident goes (its mark then carries the device's own time).
    await page.locator('[data-testid=timeline][data-live=live]').waitFor({ timeout: 30_000 });
    const at = new Date().toISOString();
    await publish(bus, `devices/${front.id}/events/incident`, { timestamp: at, type: 'incident', message: 'person at the gate (timeline test)' });

    const mark = page.locator(`[data-testid=timeline-incident][data-at="${at}"]`);
    await mark.waitFor({ timeout: 20_000 });
    // Placed at its time: its left edge is the moment's share of the strip's range.
    const where = await mark.evaluate((el) => {
      const strip = el.parentElement!.getBoundingClientRect();
      const box = el.getBoundingClientRect();
      return (box.left + box.width / 2 - strip.left) / strip.width;
    });
    assert.ok(where > 0.9 && where <= 1.001, `a moment of just now sits at the strip's right end (at ${where})`);

    // The chunk holding the moment is recorded and listed first (a loaded machine finishes a chunk
    // late): the click then checks what it must, that the page plays that chunk from that moment.
    const momentMs = Date.parse(at);
    let listed: Listed[] = [];
    await waitFor(
      'the chunk holding the incident, listed by the hub',
      async () => {
        listed = (await api(fleet.hub.url, `/fleet/playback-ready?shadow=${front.id}&limit=200`, { token: HUB_TOKEN })).body.recent_chunks ?? [];
        return listed.some((c) => holds(c, momentMs));
      },
      60_000,
      500,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nthe moment: ${at}\nchunks: ${JSON.stringify(listed.map((c) => [c.started_at, c.ended_at, c.duration_s]))}`);
    });
    await mark.click();
    const player = page.getByTestId('timeline-player');
    await player.waitFor({ timeout: 90_000 }).catch(async (err: Error) => {
      const note = await page
        .getByTestId('timeline-note')
        .textContent()
        .catch(() => null);
      const now = (await api(fleet.hub.url, `/fleet/playback-ready?shadow=${front.id}&limit=200`, { token: HUB_TOKEN })).body.recent_chunks as Listed[];
      throw new Error(`${err.message}\nnote: ${note}\nthe moment: ${at}\nchunks: ${JSON.stringify(now.map((c) => [c.started_at, c.ended_at, c.duration_s]))}`);
    });
    const chunkName = await player.getAttribute('data-chunk');
    const offset = Number(await player.getAttribute('data-offset'));
    const chunks = (await api(fleet.hub.url, `/fleet/playback-ready?shadow=${front.id}&limit=200`, { token: HUB_TOKEN })).body.recent_chunks as Listed[];
    const chunk = chunks.find((c) => c.name === chunkName);
    assert.ok(chunk, `the chunk played (${chunkName}) is one the hub lists`);
    // The chunk holds the moment, or starts just after it (a chunk ends a frame after its last picture: small holes between them).
    assert.ok(holds(chunk, momentMs), `chunk ${chunk.started_at} to ${chunk.ended_at} (${chunk.duration_s} s of video) holds ${at}`);
    // Its video may be shorter than its wall span (pictures dropped before the encoder on a loaded
    // machine): the offset is the moment's share of the span, of the video.
    const start = Date.parse(chunk.started_at);
    const spanMs = Date.parse(chunk.ended_at) - start;
    const expected = (Math.max(0, momentMs - start) / spanMs) * chunk.duration_s;
    assert.ok(Math.abs(offset - expected) < 0.01, `the offset is the moment's place in the chunk's video (${offset} s, expected ${expected} s)`);

    // Played from that moment: it starts at the offset (or the last frame, for a moment at the chunk's very end) and frames are decoded.
    const first = await page.waitForFunction(
      () => {
        const v = document.querySelector('[data-testid=timeline-player]') as HTMLVideoElement;
        const frames = v.getVideoPlaybackQuality().totalVideoFrames;
        return v.readyState >= 2 && frames > 0 ? { t: v.currentTime, frames, duration: v.duration } : false;
      },
      undefined,
      { timeout: 30_000 },
    );
    const start1 = (await first.jsonValue()) as { t: number; frames: number; duration: number };
    assert.ok(start1.t >= Math.min(offset, start1.duration) - 0.3, `playback began at the moment (${start1.t} s, offset ${offset} s)`);
    // It moves on from there: later pictures decoded, or played to its end (a loaded machine may have
    // decoded all of a short rest of the chunk before the first look: 20 of 20 pictures, ended).
    if (start1.t < start1.duration - 0.6) {
      await page
        .waitForFunction(
          (o) => {
            const v = document.querySelector('[data-testid=timeline-player]') as HTMLVideoElement;
            return v.ended || (v.currentTime > o.t + 0.2 && v.getVideoPlaybackQuality().totalVideoFrames > o.frames);
          },
          start1,
          { timeout: 20_000 },
        )
        .catch(async (err: Error) => {
          const state = await player.evaluate((el) => {
            const v = el as HTMLVideoElement;
            return {
              t: v.currentTime,
              paused: v.paused,
              ended: v.ended,
              readyState: v.readyState,
              duration: v.duration,
              playError: v.dataset.playError ?? null,
            };
          });
          throw new Error(`${err.message}: ${JSON.stringify(state)} from ${JSON.stringify(start1)}`);
        });
    }
    await page.screenshot({ path: join(artifactsDir(), 'device-timeline.png'), fullPage: true });

    // A new visit of the page has no live event of it: the hub's ring still places it (within the hub's receive delay).
    await page.goto(`${fleet.hub.url}/#/`);
    await page.getByTestId('fleet-summary').waitFor();
    await page.goto(`${fleet.hub.url}/#/device/${front.id}`);
    await page.waitForFunction(
      (t) =>
        [...document.querySelectorAll('[data-testid=timeline-incident]')].some(
          (m) => Math.abs(Date.parse(m.getAttribute('data-at') ?? '') - Date.parse(t)) < 2000,
        ),
      at,
      { timeout: 20_000 },
    );
    assert.deepEqual(pageErrors, []);
  });
});
