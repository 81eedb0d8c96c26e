/**
 * The precision device as `npm start` runs it, with no detector model: a real `lookout-edge` process
 * on the plates-and-signs scene, the sim detector simulating Omni weights (SIM_DET_CLASS_MAP=omni15,
 * plates and signs published as 14 and 15 through the remap) and a generated TrOCR pair in its
 * /data/models. The cascade finds the plates and signs through the detector's published classes and
 * reads them; on the sim's default production map it stays idle.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { OcrStatusSchema, type OcrStatus } from '../../../plugins/trocr/src/service.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { buildTrocrPair, writeTrocrPair } from '../../support/trocr-onnx-model.js';
import { waitFor } from '../../support/hub-helpers.js';

const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'trocr-precision.json');

/** What scripts/start.mjs gives its precision device for the cascade, at a light rate. */
function precisionEnv(deviceId: string, classMap: 'omni15' | 'production'): Record<string, string> {
  return {
    SIM_SCENARIO: 'plates-and-signs',
    SIM_DET_CLASS_MAP: classMap,
    SVC_DEVICE_ID: deviceId,
    EDGE_V3_ENCODE_ONLY: '0',
    RF_DETR_STRIDE_FPS: '2',
    TROCR_MAX_CROPS_PER_SEC: '2',
  };
}

interface Running {
  device: DeviceProcess;
  client: Client;
  dataDir: string;
}

async function startPrecision(broker: EmbeddedBroker, deviceId: string, classMap: 'omni15' | 'production'): Promise<Running> {
  const dataDir = mkdtempSync(join(tmpdir(), 'trocr-sim-omni-'));
  await writeTrocrPair(join(dataDir, 'data', 'models'), buildTrocrPair({ eosAtStep: 4 }));
  const device = await startDeviceProcess({
    deviceId,
    mqtt: broker.url,
    image: IMAGE,
    layer: 'layer1_rfdetr',
    role: 'gate',
    dataDir,
    env: precisionEnv(deviceId, classMap),
    readyTimeoutMs: 30_000,
  });
  const client = new Client({ name: 'trocr-sim-omni-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(device.ready.tool_url!)));
  return { device, client, dataDir };
}

async function stop(r: Running | undefined): Promise<void> {
  if (!r) return;
  await r.client.close();
  await r.device.stop();
  rmSync(r.dataDir, { recursive: true, force: true });
}

async function ocrStatus(r: Running): Promise<OcrStatus> {
  const answer = await r.client.callTool({ name: 'get_ocr_status', arguments: {} });
  return OcrStatusSchema.parse(answer.structuredContent);
}

describe('the precision device of npm start: the sim detector in Omni mode feeds the text cascade', () => {
  let broker: EmbeddedBroker;
  before(async () => {
    broker = await EmbeddedBroker.start({ port: 0 });
  });
  after(async () => {
    await broker?.close();
  });

  it('SIM_DET_CLASS_MAP=omni15: get_ocr_status reaches running with reads of the scene’s signs', async () => {
    let r: Running | undefined;
    try {
      r = await startPrecision(broker, 'sim-gate-shadow2', 'omni15');
      const running = r;
      const s = await waitFor(
        'the cascade running with reads',
        async () => {
          const x = await ocrStatus(running);
          return x.cascade === 'running' && x.recent_reads.length >= 2 ? x : undefined;
        },
        30_000,
        250,
      ).catch(async (err: Error) => assert.fail(`${err.message}: ${JSON.stringify(await ocrStatus(running))}\n${running.device.logs().slice(-3000)}`));
      assert.deepEqual(s.classes, [
        { id: 14, label: 'license_plate' },
        { id: 15, label: 'sign' },
      ]);
      assert.equal(s.routing.precision_role, true);
      const rf = (await running.client.callTool({ name: 'get_rfdetr_status', arguments: {} })).structuredContent as { backend: string; class_map: string };
      assert.deepEqual([rf.backend, rf.class_map], ['sim', 'omni15']);
      for (const read of s.recent_reads) {
        assert.equal(read.token_ids.length, 4, 'four tokens, then EOS');
        assert.equal(read.det.c, read.class_id);
        assert.equal(read.class_label, read.class_id === 14 ? 'license_plate' : 'sign');
      }
      assert.ok(
        s.recent_reads.some((read) => read.class_label === 'sign'),
        'the signs are read',
      );
      assert.ok(s.crops.read >= 2);
    } finally {
      await stop(r);
    }
  });

  it('on the sim’s default production map the same device idles, saying the weights have no plate or sign class', async () => {
    let r: Running | undefined;
    try {
      r = await startPrecision(broker, 'sim-gate2-shadow2', 'production');
      const running = r;
      const s = await waitFor(
        'the cascade idle for want of classes',
        async () => {
          const x = await ocrStatus(running);
          return x.cascade === 'idle' && /no license_plate or sign class/.test(x.reason ?? '') ? x : undefined;
        },
        15_000,
        250,
      ).catch(async (err: Error) => assert.fail(`${err.message}: ${JSON.stringify(await ocrStatus(running))}`));
      assert.deepEqual(s.classes, []);
    } finally {
      await stop(r);
    }
  });
});
