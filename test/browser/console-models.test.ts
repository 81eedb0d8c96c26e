/**
 * The console's Models page in Debian's chromium, against a hub that passes /api/* to a real model
 * builder (SQLite in a temp dir, a YOLO dataset of real images written by ffmpeg, a training job of
 * the test-double recipe run as a real child process, its ONNX package): the page lists the
 * ontology with its classes, the dataset with the split counts the builder computed, the job's state
 * and logs, the package, and its deploy goes only after a confirmation of that exact deploy.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { RunningBuilder } from '../../builder/src/start-builder.js';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { api, waitFor } from '../support/hub-helpers.js';
import { importAndWait, testBuilder, writeClip, writeText } from '../integration/builder/builder-helpers.js';
import { artifactsDir, consoleHub, HUB_TOKEN, openConsole } from './console-fleet.js';

const BUILDER_TOKEN = 'models-builder-token-3e9a';

describe('Models page in chromium', () => {
  let dir: string;
  let builder: RunningBuilder;
  let hub: RunningHub;
  let browser: BrowserContext;
  let page: Page;
  let dataset: any;
  let job: any;
  let pageErrors: string[] = [];
  const viaHub = (path: string, o: { json?: unknown } = {}) => api(hub.url, path, { token: HUB_TOKEN, ...o });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-console-models-'));
    const data = join(dir, 'builder');
    builder = await testBuilder(data, { token: BUILDER_TOKEN, host: '127.0.0.1' });
    hub = await consoleHub({
      builderUrl: builder.url,
      dataDir: join(dir, 'hub'),
      env: { LOOKOUT_BUILDER_TOKEN: BUILDER_TOKEN },
    });
    // A YOLO tree of ten two-frame clips, every frame with a knife: the builder splits it by clip.
    const root = join(data, 'gate');
    await writeText(join(root, 'classes.txt'), 'knife\n');
    for (let i = 0; i < 10; i++) {
      for (const file of await writeClip(join(root, 'images'), `clip${i}`, 2)) {
        await writeText(file.replace('/images/', '/labels/').replace(/\.jpg$/, '.txt'), '0 0.5 0.5 0.2 0.3\n');
      }
    }
    dataset = await importAndWait(hub.url, { name: 'gate', uri: root, format: 'yolo', ontology: 'default' }, HUB_TOKEN);
    assert.equal(dataset.state, 'READY', JSON.stringify(dataset.reason));
    assert.equal((await viaHub('/api/ontology/compile', { json: {} })).status, 201);
    const imports = join(data, 'imports', 'gate');
    await mkdir(imports, { recursive: true });
    const launched = await viaHub('/api/pipeline/launch', {
      json: { epochs: 2, batch_size: 8, gpu_type: 'NVIDIA_TESLA_T4', gcs_dataset: imports, recipe: 'test-double' },
    });
    assert.equal(launched.status, 202, launched.text);
    job = await waitFor(
      'the training job settled',
      async () => {
        const j = (await viaHub(`/api/pipeline/jobs/${launched.body.id}`)).body;
        return ['TRAINING_COMPLETE', 'FAILED'].includes(j.state) ? j : undefined;
      },
      60_000,
    );
    assert.equal(job.state, 'TRAINING_COMPLETE', job.reason);
    const pkg = await viaHub('/api/packages', { json: { train_job_id: job.id } });
    assert.ok(pkg.status < 300, pkg.text);

    ({ browser, page, pageErrors } = await openConsole(dir, hub.url));
  });

  after(async () => {
    await browser?.close();
    await hub?.close();
    await builder?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('lists the ontology, the dataset with its split counts, the job with its state and logs, and the package', async () => {
    await page.getByRole('link', { name: 'Models' }).click();
    const ontology = page.locator('[data-testid=ontology][data-name=default]');
    await ontology.waitFor({ timeout: 20_000 });
    for (const name of ['handgun', 'rifle', 'knife', 'backpack']) await ontology.getByText(name, { exact: true }).waitFor();

    const row = page.locator('[data-testid=dataset][data-name=gate]');
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /READY/);
    for (const split of ['train', 'val', 'test'] as const) {
      const cell = row.getByTestId(`split-${split}`);
      assert.equal(Number(await cell.getAttribute('data-frames')), dataset.splits[split].frames, `${split} frames as the builder counted them`);
      assert.match((await cell.textContent()) ?? '', new RegExp(`${dataset.splits[split].clips} clips`));
    }
    assert.equal(dataset.splits.train.frames + dataset.splits.val.frames + dataset.splits.test.frames, 20);

    const jobRow = page.locator(`[data-testid=job][data-id="${job.id}"]`);
    await jobRow.waitFor();
    assert.equal(await jobRow.getByTestId('job-state').textContent(), 'TRAINING_COMPLETE');
    await jobRow.getByTestId('job-logs-toggle').click();
    await page.getByTestId('job-logs').getByText(/epoch/).first().waitFor();
    await page.getByTestId('package').first().waitFor();
    await page.screenshot({ path: join(artifactsDir(), 'models.png'), fullPage: true });
  });

  it('deploys a package only after the operator confirms that exact deploy', async () => {
    const deployCalls: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/pipeline/deploy') deployCalls.push(r.postData() ?? '');
    });
    const form = page.getByTestId('deploy-form').first();
    await form.locator('input[name=devices]').fill('cam-canary, cam-2');
    await form.getByTestId('deploy-button').click();
    const confirm = form.getByTestId('deploy-confirm');
    await confirm.waitFor();
    assert.match((await confirm.textContent()) ?? '', /to cam-canary, cam-2 \(canary cam-canary\), layer2/);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForTimeout(500);
    assert.deepEqual(deployCalls, [], 'no deploy without the confirmation');

    await form.getByTestId('deploy-button').click();
    await form.getByTestId('deploy-confirm-button').click();
    const result = form.getByTestId('deploy-result');
    await result.waitFor({ timeout: 20_000 });
    assert.equal(deployCalls.length, 1, 'the confirmed deploy went once');
    const sent = JSON.parse(deployCalls[0]);
    assert.deepEqual(sent.devices, ['cam-canary', 'cam-2']);
    assert.equal(sent.layer, 'layer2');
    // The builder's answer is shown: a deploy job, or its typed refusal (these devices are in no registry).
    const deploys = ((await viaHub('/api/pipeline/jobs')).body.jobs as { id: string; kind: string }[]).filter((j) => j.kind === 'deploy');
    const text = (await result.textContent()) ?? '';
    if (deploys.length === 1) assert.match(text, new RegExp(`deploy job ${deploys[0].id}`));
    else assert.ok(text.length > 0 && (await result.getAttribute('class'))?.includes('error'), text);
    assert.deepEqual(pageErrors, []);
  });
});
