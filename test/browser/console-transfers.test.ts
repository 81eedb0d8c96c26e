/**
 * The console's Transfers panel (Operations page) in Debian's chromium, against a hub whose queue
 * pulls from two registered devices over real sockets: one whose recordings server sends 30 % of a
 * chunk and then stalls (the pull stays running), one whose port is closed (the pull fails). The
 * panel shows each pull with its state, its progress bar and why it failed; Cancel stops the running
 * one and Retry queues it again, each through the hub's routes.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { freePort } from '../support/free-port.js';
import { api, waitFor } from '../support/hub-helpers.js';
import { artifactsDir, consoleHub, HUB_TOKEN, openConsole } from './console-fleet.js';

const CHUNK = '20240101T000000000Z_000001.h265';
const SIZE = 100_000;
const SENT = 30_000;

describe('Transfers panel in chromium', () => {
  let dir: string;
  let stalling: Server;
  let hub: RunningHub;
  let browser: BrowserContext;
  let page: Page;
  let runningId: string;
  let failedId: string;
  let pageErrors: string[] = [];
  const viaHub = (path: string, o: { json?: unknown } = {}) => api(hub.url, path, { token: HUB_TOKEN, ...o });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-console-transfers-'));
    // A device's GET /recordings/<file> that sends the first 30 % of the chunk and then nothing more.
    stalling = createServer((req, res) => {
      if (!req.url?.startsWith('/recordings/')) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(SIZE), etag: '"v1"' });
      res.write(Buffer.alloc(SENT, 7));
    });
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    const registryFile = join(dir, 'registry.json');
    writeFileSync(
      registryFile,
      JSON.stringify({
        devices: [
          { device_id: 'cam-slow', ips: ['127.0.0.1'], tool_port: (stalling.address() as { port: number }).port },
          { device_id: 'cam-off', ips: ['127.0.0.1'], tool_port: await freePort() },
        ],
      }),
    );
    hub = await consoleHub({
      dataDir: join(dir, 'hub'),
      registryFile,
      env: { DEVICE_PASSWORD: undefined, LOOKOUT_SSH_KEY_FILE: undefined, LOOKOUT_TRANSFERS_MAX_ATTEMPTS: '1' },
    });
    runningId = (await viaHub('/fleet/transfers', { json: { device: 'cam-slow', chunks: [CHUNK] } })).body.transfers[0].id;
    failedId = (await viaHub('/fleet/transfers', { json: { device: 'cam-off', chunks: [CHUNK] } })).body.transfers[0].id;
    await waitFor('the slow pull at 30 % and the other failed', async () => {
      const a = (await viaHub(`/fleet/transfers/${runningId}`)).body;
      const b = (await viaHub(`/fleet/transfers/${failedId}`)).body;
      return a.state === 'running' && a.bytes_done === SENT && b.state === 'failed';
    });

    ({ browser, page, pageErrors } = await openConsole(dir, hub.url));
  });

  after(async () => {
    await browser?.close();
    await hub?.close();
    await new Promise((resolve) => stalling?.close(resolve));
    stalling?.closeAllConnections();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('shows each pull with its state, progress and reason, and cancels and retries through the hub', async () => {
    await page.getByRole('link', { name: 'Operations' }).click();
    const panel = page.getByTestId('ops-transfers');
    const running = panel.locator(`[data-testid=transfer-row][data-id="${runningId}"]`);
    const failed = panel.locator(`[data-testid=transfer-row][data-id="${failedId}"]`);
    await running.waitFor({ timeout: 20_000 });
    assert.equal(await running.getAttribute('data-state'), 'running');
    assert.equal(await running.getByTestId('transfer-progress').getAttribute('value'), '30');
    assert.match((await running.textContent()) ?? '', /29\.3 KiB \/ 97\.7 KiB/);
    assert.equal(await failed.getAttribute('data-state'), 'failed');
    assert.match((await failed.textContent()) ?? '', /recordings_unavailable/);
    await failed.getByTestId('transfer-retry').waitFor();
    await page.screenshot({ path: join(artifactsDir(), 'transfers.png'), fullPage: true });

    await running.getByTestId('transfer-cancel').click();
    await page.locator(`[data-testid=transfer-row][data-id="${runningId}"][data-state=cancelled]`).waitFor({ timeout: 10_000 });
    assert.equal((await viaHub(`/fleet/transfers/${runningId}`)).body.state, 'cancelled');

    await running.getByTestId('transfer-retry').click();
    await page.locator(`[data-testid=transfer-row][data-id="${runningId}"][data-state=running]`).waitFor({ timeout: 10_000 });
    const again = (await viaHub(`/fleet/transfers/${runningId}`)).body;
    assert.equal(again.state, 'running');
    assert.equal(again.attempts, 1, 'retried: its attempts counted afresh');
    assert.deepEqual(pageErrors, []);
  });
});
