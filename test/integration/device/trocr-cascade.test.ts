/**
 * The text cascade in a device made of the real plugins on a real broker: the onnx detector on an
 * Omni package whose labels.json remaps license_plate (10) and sign (11) to free production slots
 * (14, 15), the tracker, and the trocr plugin on a generated TrOCR pair in /data/models. Reads go
 * out on events/ocr; a pair that crashes or does not fit leaves the cascade partial while dets go
 * on, and nothing runs it again until its files change; the cascade idles, saying why, where it is
 * not meant to run.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { OMNI15_LABELS } from '../../../plugins/detector/src/model/class-maps.js';
import { OcrReadSchema, OcrStatusSchema, type OcrStatus } from '../../../plugins/trocr/src/service.js';
import { BusRecorder, recordFor } from '../../support/bus-recorder.js';
import { buildTestDetrModel, testLabels, writePackage } from '../../support/onnx-model.js';
import { startPluginDevice, type PluginDevice } from '../../support/plugin-device.js';
import { cannotMount, mountSmallFilesystem } from '../../support/small-filesystem.js';
import { buildTrocrPair, writeTrocrPair, type TrocrModelSpec } from '../../support/trocr-onnx-model.js';
import { sleep, waitFor } from '../../support/hub-helpers.js';

const PLUGINS = ['die-temp', 'camera', 'detector', 'tracker', 'trocr'];
const OMNI_REMAP = { '0': 10, '1': 12, '2': 11, '3': 2, '4': 3, '5': 5, '7': 1, '8': 0, '10': 14, '11': 15 };
const PRECISION = { SVC_DEVICE_ID: 'fleet-shadow2-precision', EDGE_V3_ENCODE_ONLY: '0' };
const DETECTOR = { RF_DETR_BACKEND: 'onnx', RF_DETR_MODEL_PATH: '/data/models/rf_detr_edge4.tar', RF_DETR_STRIDE_FPS: '5' };

let broker: EmbeddedBroker;
let observer: MqttBus;

before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  observer = await MqttBus.connect({ url: broker.url, clientId: 'trocr-observer', clean: true });
});
after(async () => {
  await observer.close();
  await broker.close();
});

/** The detector package: a small RF-DETR-shaped model whose scores pass everywhere, on the Omni or production map. */
async function detectorPackage(dataDir: string, map: 'omni15' | 'production'): Promise<void> {
  const classes = map === 'omni15' ? 15 : 23;
  const model = buildTestDetrModel({ height: 320, width: 320, queries: 12, classes, seed: 3, logitBias: 2 });
  const labels = map === 'omni15' ? testLabels(320, { classes: [...OMNI15_LABELS], class_map: 'omni15', remap: OMNI_REMAP }) : testLabels(320);
  await writePackage(join(dataDir, 'data', 'models'), { modelName: 'rf_detr_qcs8550.onnx', model: model.bytes, labels });
}

function device(env: Record<string, string>, prepare: (dataDir: string) => Promise<void>): Promise<PluginDevice> {
  return startPluginDevice({ brokerUrl: broker.url, plugins: PLUGINS, layer: 'layer2', env: { ...DETECTOR, TROCR_RECHECK_MS: '100', ...env }, prepare });
}

const pairIn =
  (spec: TrocrModelSpec, map: 'omni15' | 'production' = 'omni15') =>
  async (dataDir: string) => {
    await detectorPackage(dataDir, map);
    await writeTrocrPair(join(dataDir, 'data', 'models'), buildTrocrPair(spec));
  };

async function status(d: PluginDevice): Promise<OcrStatus> {
  return OcrStatusSchema.parse(await d.runtime.tools.call('get_ocr_status', {}));
}

async function cascadeIs(d: PluginDevice, state: OcrStatus['cascade'], also: (s: OcrStatus) => boolean = () => true, timeoutMs = 20_000): Promise<OcrStatus> {
  try {
    return await waitFor(
      `the cascade ${state}`,
      async () => {
        const s = await status(d);
        return s.cascade === state && also(s) ? s : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    const s = await status(d);
    throw new Error(`${(err as Error).message}; it is ${s.cascade}: ${s.reason}; crops ${JSON.stringify(s.crops)}`);
  }
}

async function detsKeepFlowing(d: PluginDevice): Promise<void> {
  const dets = await recordFor(observer, `devices/${d.id}/dets`, 1200);
  assert.ok(dets.length >= 3, `dets still published: ${dets.length} in 1.2 s`);
}

describe('trocr cascade in a device', () => {
  it('reads plates and signs: token ids with the detection, track and frame on events/ocr, bounded crops, the status tool', async () => {
    const d = await device({ ...PRECISION, TROCR_MAX_CROPS_PER_SEC: '2', TROCR_MIN_CONFIDENCE: '0.3' }, pairIn({ eosAtStep: 6 }));
    const recorder = new BusRecorder(20_000);
    const off = await observer.subscribe(`devices/${d.id}/events/ocr`, recorder.handler);
    try {
      const running = await cascadeIs(d, 'running');
      assert.deepEqual(running.classes, [
        { id: 14, label: 'license_plate' },
        { id: 15, label: 'sign' },
      ]);
      assert.equal(running.vocab_size, 64);
      assert.equal(running.backend, 'onnx');
      assert.ok(running.models.decoder.path.endsWith('data/models/trocr_decoder.onnx'));
      const first = await recorder.until(() => true, 'a read on events/ocr');
      await recorder.until((m) => m.seq > first.seq, 'a second read');
      for (const m of recorder.messages) {
        const read = OcrReadSchema.parse(m.body);
        assert.equal(read.token_ids.length, 6, 'six tokens, then EOS');
        assert.equal(read.stop, 'eos');
        assert.ok(read.class_id === 14 || read.class_id === 15);
        assert.equal(read.class_label, read.class_id === 14 ? 'license_plate' : 'sign');
        assert.equal(read.det.c, read.class_id);
        assert.equal(typeof read.track_id, 'number', 'the tracker layer gives the track');
        assert.ok(Date.parse(read.frame_time) <= Date.parse(read.timestamp));
        assert.ok(read.crop.width >= 1 && read.crop.x + read.crop.width <= 640);
      }
      const s = await cascadeIs(d, 'running', (x) => x.crops.read >= 2 && x.crops.dropped_rate + x.crops.dropped_busy > 0);
      assert.ok(s.crops_per_sec > 0);
      assert.ok(s.decoder_ms_per_token !== null && s.decoder_ms_per_token > 0);
      assert.ok(s.encoder_ms !== null && s.encoder_ms > 0);
      assert.ok(s.recent_reads.length >= 2);
      assert.ok(s.best_by_track.length >= 1);
      assert.ok(s.crops.offered >= s.crops.read + s.crops.dropped_busy + s.crops.dropped_rate, 'every crop offered is read, dropped or in flight');
      await detsKeepFlowing(d);
    } finally {
      await off();
      await d.stop();
    }
  });

  it('a decoder that throws: TROCR_DLC_FW_CRASH, partial while dets keep flowing, no retry until the decoder file changes', async () => {
    const d = await device({ ...PRECISION, TROCR_MAX_CROPS_PER_SEC: '4', TROCR_MIN_CONFIDENCE: '0.3' }, pairIn({ crashAtStep: 2 }));
    try {
      const partial = await cascadeIs(d, 'partial');
      assert.equal(partial.load_report, 'TROCR_DLC_FW_CRASH');
      assert.equal(partial.error?.code, 'trocr.dlc_fw_crash');
      assert.match(partial.reason!, /crashed.*the detector and dets go on without text, and the cascade waits for the model files to change/);
      assert.equal(partial.recompile_gate.closed, true);
      assert.ok(partial.crops.failed >= 1, 'the crops of the read that crashed');
      assert.equal(partial.crops.read, 0);
      await detsKeepFlowing(d);
      // Many recheck periods: nothing runs the pair again.
      await sleep(800);
      const still = await status(d);
      assert.equal(still.cascade, 'partial');
      assert.deepEqual(still.crops, partial.crops);
      const rf = (await d.runtime.tools.call('get_rfdetr_status', {})) as { detection: string };
      assert.equal(rf.detection, 'running', 'the detector works');
      // A recompiled decoder is pushed: the gate opens.
      await writeTrocrPair(join(d.dataDir, 'data', 'models'), buildTrocrPair({ eosAtStep: 3 }));
      const back = await cascadeIs(d, 'running', (s) => s.crops.read >= 1);
      assert.equal(back.load_report, null);
      assert.equal(back.recompile_gate.closed, false);
      assert.equal(back.recent_reads[0].token_ids.length, 3);
    } finally {
      await d.stop();
    }
  });

  it('graphs that do not fit (a 320 encoder) are refused at load, each mismatch named; dets go on', async () => {
    const d = await device(PRECISION, pairIn({ inputSize: 320 }));
    try {
      const s = await cascadeIs(d, 'partial');
      assert.equal(s.load_report, 'TROCR_DLC_FW_CRASH');
      assert.equal(s.mismatches.length, 13);
      assert.ok(s.mismatches[0].includes('pixel_values is [1, 3, 320, 320]') && s.mismatches[0].includes('320 is wrong'), s.mismatches[0]);
      assert.equal(s.crops.read, 0);
      await detsKeepFlowing(d);
    } finally {
      await d.stop();
    }
  });

  it('on production weights the cascade is idle and says so', async () => {
    const d = await device(PRECISION, pairIn({}, 'production'));
    try {
      const s = await cascadeIs(d, 'idle');
      assert.match(s.reason!, /no license_plate or sign class \(production weights/);
      assert.deepEqual(s.classes, []);
    } finally {
      await d.stop();
    }
  });

  it('idle, saying why, off the precision role or when the camera is reserved for the encoder', async () => {
    for (const [env, why] of [
      [{}, /SVC_DEVICE_ID is not set/],
      [{ SVC_DEVICE_ID: 'fleet-shadow1' }, /SVC_DEVICE_ID=fleet-shadow1 does not contain shadow2/],
      [{ SVC_DEVICE_ID: 'shadow2', EDGE_V3_ENCODE_ONLY: '1' }, /EDGE_V3_ENCODE_ONLY=1 reserves the camera/],
    ] as const) {
      const d = await device(env, pairIn({}));
      try {
        const s = await status(d);
        assert.equal(s.cascade, 'idle');
        assert.match(s.reason!, why);
      } finally {
        await d.stop();
      }
    }
  });

  it('snpe refuses here with a clear message: partial, the detector goes on', async () => {
    const d = await device({ ...PRECISION, TROCR_BACKEND: 'snpe' }, pairIn({}));
    try {
      const s = await cascadeIs(d, 'partial');
      assert.equal(s.error?.code, 'backend_unavailable');
      assert.match(s.reason!, /TROCR_BACKEND=snpe cannot run .*trocr_encoder_qcs8550\.dlc.*use TROCR_BACKEND=onnx/);
      assert.equal(s.load_report, null);
    } finally {
      await d.stop();
    }
  });

  it('less than 250 MB for the two files is refused clearly', { skip: cannotMount() }, async () => {
    const small = await mountSmallFilesystem({ sizeKiB: 512, prefix: 'trocr-models-' });
    const d = await device(
      { ...PRECISION, TROCR_ENCODER_MODEL: '/data/trocr/trocr_encoder.onnx', TROCR_DECODER_MODEL: '/data/trocr/trocr_decoder.onnx' },
      async (dataDir) => {
        await detectorPackage(dataDir, 'omni15');
        await mkdir(join(dataDir, 'data'), { recursive: true });
        await symlink(small.dir, join(dataDir, 'data', 'trocr'));
      },
    );
    try {
      const s = await cascadeIs(d, 'partial');
      assert.equal(s.error?.code, 'trocr.storage_insufficient');
      assert.match(s.reason!, /the text models need about 250 MB for both files; .*data\/trocr has 0\.\d MB free/);
      await detsKeepFlowing(d);
    } finally {
      await d.stop();
      await small.unmount();
    }
  });
});
