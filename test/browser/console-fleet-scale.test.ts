/**
 * The fleet page with 1 000 devices in Debian's chromium: the devices' status messages go onto the
 * hub's real broker, and the page lays out one page of cards (asking a picture for those only), says
 * how many pages there are, pages on, and finds one device by its id.
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
});
