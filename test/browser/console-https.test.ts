/**
 * The console over HTTPS in Debian's chromium: the hub serves the certificate `lookout certs` issues
 * from the fleet CA, and the browser trusts that CA the way a user's machine does, through its NSS
 * database (certutil from libnss3-tools, installed by scripts/setup-system.sh) in the profile's home.
 * A browser that has not been given the fleet CA refuses the hub.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';
import { CA_COMMON_NAME } from '../../lib/tls/fleet-ca.js';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { provisionTestFleetCerts } from '../support/fleet-certs.js';
import { testHub } from '../support/hub-helpers.js';
import { CHROMIUM, CHROMIUM_ARGS } from './console-fleet.js';

const TOKEN = 'console-over-https-token-5b1e';

/** A chromium whose home holds an NSS database, trusting `caCertPath` as a CA when given. */
async function chromiumWithHome(home: string, caCertPath?: string): Promise<BrowserContext> {
  const nss = join(home, '.pki', 'nssdb');
  mkdirSync(nss, { recursive: true });
  execFileSync('certutil', ['-d', `sql:${nss}`, '-N', '--empty-password']);
  if (caCertPath) execFileSync('certutil', ['-d', `sql:${nss}`, '-A', '-t', 'C,,', '-n', 'lookout-fleet-ca', '-i', caCertPath]);
  return chromium.launchPersistentContext(join(home, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    env: { ...process.env, HOME: home },
  });
}

describe('the console over HTTPS, the fleet CA trusted by the browser', () => {
  let dir: string;
  let hub: RunningHub;
  const browsers: BrowserContext[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lookout-console-https-'));
    const dataDir = join(dir, 'hub');
    const certs = await provisionTestFleetCerts(join(dir, 'ca'), { hubDataDir: dataDir });
    hub = await testHub({ dataDir, host: '127.0.0.1', tls: true, token: TOKEN });
    browsers.push(await chromiumWithHome(join(dir, 'trusting'), certs.caCertPath), await chromiumWithHome(join(dir, 'stranger')));
  });

  after(async () => {
    await Promise.all(browsers.map((b) => b.close()));
    await hub?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the console over https: sign in and see the fleet, in a browser given the fleet CA', async () => {
    assert.match(hub.url, /^https:\/\//);
    const page = await browsers[0].newPage();
    // localhost: a name the hub's certificate carries (lookout certs adds it with 127.0.0.1 and ::1).
    const url = hub.url.replace('127.0.0.1', 'localhost');
    const answer = await page.goto(url + '/');
    assert.equal(answer?.status(), 200);
    assert.equal((await answer?.securityDetails())?.issuer, CA_COMMON_NAME);
    await page.locator('input[name=token]').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('fleet-summary').waitFor();
  });

  it('is refused by a browser that was not given the fleet CA', async () => {
    const page = await browsers[1].newPage();
    await assert.rejects(page.goto(hub.url.replace('127.0.0.1', 'localhost') + '/'), /ERR_CERT_AUTHORITY_INVALID/);
  });
});
