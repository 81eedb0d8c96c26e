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
import { HUB_BUS_USER, busPassword } from '../../lib/auth/bus-acl.js';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { api, endClient, mqttClient, msg, publish, testHub, TEST_FLEET_SECRET, waitFor } from '../support/hub-helpers.js';
import { consolePluginSet, HUB_TOKEN, launchChromium } from './console-fleet.js';

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
    hub = await testHub({ ...(await consolePluginSet()), token: HUB_TOKEN, host: '127.0.0.1', dataDir: join(dir, 'hub') });
    // The hub's own bus identity may publish on any device's topics: 1 000 devices without 1 000 processes.
    bus = await mqttClient(hub.brokerUrl, { username: HUB_BUS_USER, password: busPassword(TEST_FLEET_SECRET, HUB_BUS_USER), clientId: 'console-scale-test' });
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
    browser = await launchChromium(dir);
    page = await browser.newPage();
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/stream/snapshot') snapshots.push(new URL(r.url()).searchParams.get('target') ?? '');
    });
    await page.goto(`${hub.url}/`);
    await page.locator('input[name=token]').fill(HUB_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('fleet-summary').waitFor();
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
