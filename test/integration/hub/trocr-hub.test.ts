/**
 * A precision device (a real `lookout-edge` process: the trocr-precision test image, the onnx
 * detector on an Omni package remapping plates and signs, a generated TrOCR pair) and a hub with the
 * ocr-text plugin and the test vocabulary: GET /fleet/ocr shows the device's reads as text, merged
 * per track, with the cascade's state beside them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import ocrText from '../../../hub/plugins/ocr-text/src/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { OMNI15_LABELS } from '../../../plugins/detector/src/model/class-maps.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { buildTestDetrModel, testLabels, writePackage } from '../../support/onnx-model.js';
import { buildTrocrPair, writeTrocrPair } from '../../support/trocr-onnx-model.js';
import { api, testHub, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'precision-shadow2';
const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'trocr-precision.json');
const VOCAB_DIR = join(packageRoot(), 'test', 'fixtures', 'trocr');
const SPECIAL = new Set(['<s>', '<pad>', '</s>', '<unk>', '<mask>']);
const OMNI_REMAP = { '8': 0, '3': 2, '10': 14, '11': 15 };

/** GPT-2's byte ↔ character table, inverted: the oracle the hub's text is checked against. */
function charToByte(): Map<string, number> {
  const printable = [...range(33, 126), ...range(161, 172), ...range(174, 255)];
  const map = new Map<string, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) map.set(String.fromCodePoint(printable.includes(b) ? b : 256 + extra++), b);
  return map;
}
function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

describe('precision device and hub: reads as text', () => {
  let hub: RunningHub;
  let device: DeviceProcess;
  let dataDir: string;
  let vocab: Record<string, number>;

  before(async () => {
    vocab = JSON.parse(await readFile(join(VOCAB_DIR, 'vocab.json'), 'utf8')) as Record<string, number>;
    dataDir = mkdtempSync(join(tmpdir(), 'trocr-hub-'));
    const models = join(dataDir, 'data', 'models');
    const detr = buildTestDetrModel({ height: 320, width: 320, queries: 12, classes: 15, seed: 3, logitBias: 2 });
    await writePackage(models, {
      modelName: 'rf_detr_qcs8550.onnx',
      model: detr.bytes,
      labels: testLabels(320, { classes: [...OMNI15_LABELS], class_map: 'omni15', remap: OMNI_REMAP }),
    });
    await writeTrocrPair(models, buildTrocrPair({ eosAtStep: 5 }));
    const set = await loadHubPluginSet();
    hub = await testHub({
      plugins: [...set.plugins.filter((p) => p.name !== ocrText.name && p.name !== 'device-ssh'), ocrText],
      essential: set.essential,
      env: { LOOKOUT_HUB_OCR_TOKENIZER_DIR: VOCAB_DIR },
    });
    device = await startDeviceProcess({
      deviceId: DEVICE,
      mqtt: hub.brokerUrl,
      image: IMAGE,
      layer: 'layer2',
      role: 'precision',
      dataDir,
      env: {
        SVC_DEVICE_ID: DEVICE,
        EDGE_V3_ENCODE_ONLY: '0',
        RF_DETR_BACKEND: 'onnx',
        RF_DETR_MODEL_PATH: '/data/models/rf_detr_edge4.tar',
        RF_DETR_STRIDE_FPS: '5',
        TROCR_MAX_CROPS_PER_SEC: '2',
        TROCR_MIN_CONFIDENCE: '0.3',
      },
      readyTimeoutMs: 30_000,
    });
  });
  after(async () => {
    await device?.stop();
    await hub?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('GET /fleet/ocr: the cascade running, each track’s most confident read decoded with the operator’s vocabulary', async () => {
    const r = await waitFor(
      'reads as text',
      async () => {
        const a = await api(hub.url, `/fleet/ocr?target=${DEVICE}`);
        return a.status === 200 && a.body.reads.length >= 2 ? a : undefined;
      },
      30_000,
      250,
    ).catch((err: Error) => assert.fail(`${err.message}\n${device.logs().slice(-3000)}`));
    assert.equal(r.body.cascade, 'running', r.text);
    assert.equal(r.body.status_error, null);
    assert.equal(r.body.online, true);
    assert.deepEqual(r.body.tokenizer, { loaded: true, dir: VOCAB_DIR, vocab_size: 64, vocab_matches: true, error: null });
    const byId = new Map(Object.entries(vocab).map(([token, id]) => [id, token]));
    const bytes = charToByte();
    const tracks = new Set<number>();
    for (const read of r.body.reads as { token_ids: number[]; text: string; track_id: number | null; reads_merged: number; class_label: string }[]) {
      assert.equal(read.token_ids.length, 5, 'five tokens, then EOS');
      const tokens = read.token_ids.map((id) => byId.get(id)!).filter((t) => !SPECIAL.has(t));
      const expected = Buffer.from([...tokens.join('')].map((ch) => bytes.get(ch)!)).toString('utf8');
      assert.equal(read.text, expected);
      assert.ok(read.reads_merged >= 1);
      assert.ok(['license_plate', 'sign'].includes(read.class_label));
      if (read.track_id !== null) {
        assert.ok(!tracks.has(read.track_id), `track ${read.track_id} appears once`);
        tracks.add(read.track_id);
      }
    }
  });
});
