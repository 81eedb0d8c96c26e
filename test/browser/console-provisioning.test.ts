/**
 * The Operations page's Provisioning section in Debian's chromium, against a hub with the fleet CA
 * and a real sshd whose scratch folder stands in for the device: the operator fills the form (id,
 * address, private key, host key, layer, root) and the page shows the steps the hub answered, the
 * files on the device and the wait for a hello no device sends here (a one-second bound), and the
 * device in the list of provisionings; the key is cleared from the form once sent.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { provisionTestFleetCerts } from '../support/fleet-certs.js';
import { startSshd, type Sshd } from '../support/sshd.js';
import { artifactsDir, consoleHub, openConsole } from './console-fleet.js';

describe('Provisioning panel in chromium', () => {
  let dir: string;
  let root: string;
  let sshd: Sshd;
  let hub: RunningHub;
  let browser: BrowserContext;
  let page: Page;
  let pageErrors: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-console-provision-'));
    root = join(dir, 'device-root');
    await mkdir(root);
    await provisionTestFleetCerts(join(dir, 'ca'), { hubDataDir: join(dir, 'hub') });
    sshd = await startSshd();
    hub = await consoleHub({
      dataDir: join(dir, 'hub'),
      env: {
        LOOKOUT_FLEET_CA_DIR: join(dir, 'ca'),
        LOOKOUT_SSH_KNOWN_HOSTS: join(dir, 'known_hosts'),
        LOOKOUT_PROVISION_START_COMMAND: '',
        LOOKOUT_PROVISION_HELLO_TIMEOUT_S: '1',
      },
    });
    ({ browser, page, pageErrors } = await openConsole(dir, hub.url));
  });

  after(async () => {
    await browser?.close();
    await hub?.close();
    await sshd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('sends the form and shows the steps, where it stopped and the device in the list', async () => {
    await page.getByRole('link', { name: 'Operations' }).click();
    const section = page.getByTestId('ops-provisioning');
    const form = section.getByTestId('provision-form');
    await form.waitFor();
    await form.locator('input[name=device_id]').fill('cam-from-console');
    await form.locator('input[name=host]').fill(sshd.host);
    await form.locator('input[name=port]').fill(String(sshd.port));
    await form.locator('select[name=auth]').selectOption('key');
    await form.locator('textarea[name=private_key]').fill(await readFile(sshd.clientKeyPath, 'utf8'));
    await form.locator('input[name=host_key]').fill(sshd.hostPublicKey);
    await form.locator('input[name=layer]').fill('layer0');
    await form.locator('input[name=root]').fill(root);
    await form.getByRole('button', { name: 'Provision' }).click();

    const outcome = section.getByTestId('provision-outcome');
    await outcome.getByTestId('provision-error').waitFor({ timeout: 30_000 });
    assert.equal(await outcome.getByTestId('provision-error').textContent(), 'fleet-provision.hello_timeout');
    const status = async (step: string) => (await outcome.locator(`tr[data-step=${step}] td`).nth(1).textContent())?.trim();
    for (const step of ['connect', 'fleet_ca', 'peer_certificate', 'mesh_key', 'device_env', 'layer_env', 'registry'])
      assert.equal(await status(step), 'done', step);
    assert.equal(await status('hello'), 'failed');
    assert.equal((await stat(join(root, 'data', 'config', 'shadow_peer.key'))).mode & 0o777, 0o600);
    await section.getByTestId('provision-records').getByText('cam-from-console').waitFor();
    assert.equal(await form.locator('textarea[name=private_key]').inputValue(), '', 'the key is not kept in the form');
    await page.screenshot({ path: join(artifactsDir(), 'provisioning.png'), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
