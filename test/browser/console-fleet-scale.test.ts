/**
 * The fleet page with 1 000 devices in Debian's chromium: the devices' status messages go onto the
 * hub's real broker, and the page lays out one page of cards (asking a picture for those only), says
 * how many pages there are, pages on, and finds one device by its id; a card is drawn again for its
 * own device's news, not for each of the other 999's.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import type { BrowserContext, Page } from 'playwright-core';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { api, endClient, msg, publish, waitFor } from '../support/hub-helpers.js';
import { consoleHub, HUB_TOKEN, hubBusClient, openConsole } from './console-fleet.js';

const DEVICES = 1000;
const PAGE = 48;
const id = (i: number) => `cam-${String(i).padStart(4, '0')}`;

describe('fleet page at 1 000 devices in chromium', () => {
  let dir: string;
  let hub: RunningHub;
  let bus: MqttClient;
  let browser: BrowserContext;
  let page: Page;
  const snapshots: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-console-scale-'));
    hub = await consoleHub({ dataDir: join(dir, 'hub') });
    // As the hub's own bus identity: 1 000 devices without 1 000 processes.
    bus = await hubBusClient(hub, 'console-scale-test');
    for (let i = 0; i < DEVICES; i++) {
      await publish(bus, `devices/${id(i)}/hello`, msg.hello(id(i), ['127.0.0.1'], 9, [id(i)]), { qos: 0 });
      await publish(bus, `devices/${id(i)}/status`, msg.status(id(i)), { qos: 0 });
    }
    await waitFor(
      'every device in the hub',
      async () => Object.keys((await api(hub.url, '/fleet/mqtt/latest', { token: HUB_TOKEN })).body.devices ?? {}).length >= DEVICES,
      30_000,
      250,
    );
    ({ browser, page } = await openConsole(dir, hub.url, (p) =>
      p.on('request', (r) => {
        if (new URL(r.url()).pathname === '/stream/snapshot') snapshots.push(new URL(r.url()).searchParams.get('target') ?? '');
      }),
    ));
  });

  after(async () => {
    await browser?.close();
    if (bus) await endClient(bus);
    await hub?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('shows one page of cards, asks pictures for those only, pages on and finds a device by id', async () => {
    await page.waitForFunction((n) => document.querySelector('[data-testid=fleet-summary] .big')?.textContent === String(n), DEVICES, { timeout: 30_000 });
    const pager = page.getByTestId('fleet-pager');
    await pager.waitFor();
    assert.equal(await pager.getAttribute('data-pages'), String(Math.ceil(DEVICES / PAGE)));
    const cards = page.getByTestId('device-card');
    assert.equal(await cards.count(), PAGE);
    assert.equal(await cards.first().getAttribute('data-device'), id(0));
    await page.waitForTimeout(1500);
    assert.ok(new Set(snapshots).size <= PAGE, `pictures asked for the page's cards only (${new Set(snapshots).size})`);

    await pager.getByRole('button', { name: 'next ›' }).click();
    await page.waitForFunction((first) => document.querySelector('[data-testid=device-card]')?.getAttribute('data-device') === first, id(PAGE));
    assert.equal(await cards.count(), PAGE);

    await page.getByTestId('filter-search').fill(id(999));
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=device-card]').length === 1);
    assert.equal(await cards.first().getAttribute('data-device'), id(999));
    assert.equal(await pager.count(), 0, 'one page: no pager');
  });

  it("redraws a card for its own device's news and the clock's second, not for the rest of the fleet's", async () => {
    // Back to the whole fleet's first page (the test before left a search in the filter).
    const search = page.getByTestId('filter-search');
    await search.fill('');
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=device-card]').length === n, PAGE);
    // The page's own devices speak once first: their cards are fresh, then they stay quiet.
    for (let i = 0; i < PAGE; i++) await publish(bus, `devices/${id(i)}/telemetry`, msg.telemetry(39, 10), { qos: 0 });
    await page
      .locator(`[data-testid=device-card][data-device=${id(PAGE - 1)}]`)
      .getByText('39.0 °C')
      .waitFor({ timeout: 30_000 });
    // Each card on the page: how many DOM commits changed something in it.
    await page.evaluate(() => {
      const w = window as unknown as { __touched: Record<string, number>; __since: number };
      w.__touched = {};
      w.__since = performance.now();
      new MutationObserver((records) => {
        const cards = new Set<string>();
        for (const r of records) {
          const el = r.target.nodeType === 1 ? (r.target as Element) : r.target.parentElement;
          const id = el?.closest('[data-testid=device-card]')?.getAttribute('data-device');
          if (id) cards.add(id);
        }
        for (const id of cards) w.__touched[id] = (w.__touched[id] ?? 0) + 1;
      }).observe(document.querySelector('.cards') as Element, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    // The devices off the page speak (three rounds: the hub sends a device's card at most once a second).
    for (let round = 0; round < 3; round++) {
      for (let i = PAGE; i < DEVICES; i++) await publish(bus, `devices/${id(i)}/telemetry`, msg.telemetry(40 + round, 10), { qos: 0 });
      await page.waitForTimeout(1000);
    }
    // One on the page speaks last: once its card shows it, the page has had (nearly) all the fleet's news.
    await publish(bus, `devices/${id(0)}/telemetry`, msg.telemetry(77.7, 10), { qos: 0 });
    await page
      .locator(`[data-testid=device-card][data-device=${id(0)}]`)
      .getByText('77.7 °C')
      .waitFor({ timeout: 30_000 });
    const { touched, seconds } = await page.evaluate(() => {
      const w = window as unknown as { __touched: Record<string, number>; __since: number };
      return { touched: w.__touched, seconds: (performance.now() - w.__since) / 1000 };
    });
    // A quiet card changes with the clock's second ("last heard … ago") and a fleet health refresh at most;
    // before, every card on the page was drawn again for each network chunk of the fleet's 950 cards a second.
    const bound = Math.ceil(seconds) + 4;
    for (let i = 1; i < PAGE; i++) {
      assert.ok((touched[id(i)] ?? 0) <= bound, `${id(i)} redrawn ${touched[id(i)]} times in ${seconds.toFixed(1)} s (at most ${bound})`);
    }
    // The fleet's news did reach the page: the last device's card shows its last reading.
    await search.fill(id(DEVICES - 1));
    await page
      .locator(`[data-testid=device-card][data-device=${id(DEVICES - 1)}]`)
      .getByText('42.0 °C')
      .waitFor({ timeout: 30_000 });
  });
});
