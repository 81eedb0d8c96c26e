/**
 * The Operations page's Remediation section in Debian's chromium, against a hub and a real
 * `lookout-edge` process whose third-party plugin failed at start: the dry run shows the restart it
 * would make on that device and sends no command; Apply restarts the plugin through the device's cmd
 * topic and shows the outcome and the grade after.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import type { BrowserContext, Page } from 'playwright-core';
import { packageRoot } from '../../core/src/paths/package-root.js';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../support/device-process.js';
import { api, endClient, mqttClient, testHub, waitFor } from '../support/hub-helpers.js';
import { artifactsDir, consolePluginSet, HUB_TOKEN, launchChromium } from './console-fleet.js';

const ID = 'cam-remedy-ui';

describe('Remediation panel in chromium', () => {
  let dir: string;
  let hub: RunningHub;
  let device: DeviceProcess;
  let client: MqttClient;
  let browser: BrowserContext;
  let page: Page;
  const commands: string[] = [];
  const pageErrors: string[] = [];

  const failedPlugins = async () =>
    ((await api(hub.url, '/fleet/health', { token: HUB_TOKEN })).body.devices?.[ID]?.plugins?.failed as { name: string }[] | undefined)?.map((p) => p.name);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-console-remediation-'));
    hub = await testHub({
      ...(await consolePluginSet()),
      token: HUB_TOKEN,
      host: '127.0.0.1',
      dataDir: join(dir, 'hub'),
      env: { READINESS_START_DELAY_MS: '600000', READINESS_RECHECK_ON_CHANGE: '0' },
    });
    client = await mqttClient(hub.brokerUrl, { clientId: 'remediation-ui-watch' });
    client.on('message', (topic) => commands.push(topic));
    await new Promise<void>((resolve, reject) => client.subscribe(`devices/${ID}/cmd/#`, { qos: 1 }, (err) => (err ? reject(err) : resolve())));
    device = await startDeviceProcess({
      deviceId: ID,
      mqtt: hub.brokerUrl,
      dataDir: join(dir, 'device'),
      image: join(packageRoot(), 'test', 'fixtures', 'images', 'flaky-camera.json'),
      layer: 'layer2',
      env: { HEALTH_INTERVAL_MS: '500' },
    });
    await waitFor('flaky failed in /fleet/health', async () => ((await failedPlugins())?.includes('flaky') ? true : undefined), 60_000);

    browser = await launchChromium(dir);
    page = await browser.newPage();
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.goto(`${hub.url}/`);
    await page.locator('input[name=token]').fill(HUB_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('fleet-summary').waitFor();
  });

  after(async () => {
    await browser?.close();
    if (client) await endClient(client);
    await device?.stop().catch(() => undefined);
    await hub?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('shows the dry run per device and sends nothing; Apply restarts the plugin and shows the outcome', async () => {
    await page.getByRole('link', { name: 'Operations' }).click();
    const section = page.getByTestId('ops-remediation');
    await section.getByRole('heading', { name: 'Remediation' }).waitFor();
    await section.getByTestId('remediation-plan').click();
    const deviceBlock = section.locator(`[data-testid=remediation-device][data-device="${ID}"]`);
    const restart = deviceBlock.locator('[data-testid=remediation-action][data-remedy=restart_plugin]');
    await restart.waitFor({ timeout: 60_000 });
    assert.equal(await restart.getAttribute('data-status'), 'planned');
    assert.match((await restart.textContent()) ?? '', /restart_plugin\(\{"name":"flaky"\}\)/);
    assert.equal(await section.getByTestId('remediation-summary').getAttribute('data-dry-run'), 'true');
    assert.deepEqual(commands, [], 'the dry run sent no command');
    assert.ok((await failedPlugins())?.includes('flaky'));
    await page.screenshot({ path: join(artifactsDir(), 'remediation-dry-run.png'), fullPage: true });

    // The cause is fixed; the restart is what is left to do.
    await writeFile(join(dir, 'device', 'flaky-ready'), 'yes');
    await section.getByTestId('remediation-apply').click();
    await section.locator('[data-testid=remediation-summary][data-dry-run=false]').waitFor({ timeout: 60_000 });
    const applied = section.locator(`[data-testid=remediation-device][data-device="${ID}"] [data-testid=remediation-action][data-remedy=restart_plugin]`);
    assert.equal(await applied.getAttribute('data-status'), 'done', (await applied.textContent()) ?? '');
    await section.locator(`[data-testid=remediation-device][data-device="${ID}"] [data-testid=grade-after]`).waitFor();
    assert.deepEqual([...new Set(commands)], [`devices/${ID}/cmd/tool`]);
    await waitFor('flaky no longer failed', async () => ((await failedPlugins())?.includes('flaky') === false ? true : undefined));
    await page.screenshot({ path: join(artifactsDir(), 'remediation-applied.png'), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
