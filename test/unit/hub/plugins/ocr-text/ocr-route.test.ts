/**
 * GET /fleet/ocr in a hub whose bus is in memory: reads a device published on events/ocr are shown
 * as text, merged per track, even when its tool server cannot be reached (the reason is given);
 * without tokenizer files the ids stay, and the answer says why there is no text.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import { packageRoot } from '../../../../../core/src/paths/package-root.js';
import ocrText from '../../../../../hub/plugins/ocr-text/src/index.js';
import { loadHubPluginSet } from '../../../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import type { OcrRead } from '../../../../../plugins/trocr/src/service.js';
import { api, msg, testHub, waitFor } from '../../../../support/hub-helpers.js';
import { freePort } from '../../../../support/free-port.js';

const VOCAB_DIR = join(packageRoot(), 'test', 'fixtures', 'trocr');
let n = 0;

function read(track: number | null, ids: number[], confidence: number): OcrRead {
  const at = new Date(Date.now() + ++n).toISOString();
  return {
    type: 'ocr',
    timestamp: at,
    read_id: `boot-${n}`,
    frame_time: at,
    frame_index: n,
    track_id: track,
    class_id: 14,
    class_label: 'license_plate',
    det: { c: 14, p: 0.8, b: [10, 20, 90, 40] },
    crop: { x: 10, y: 20, width: 80, height: 20 },
    token_ids: ids,
    stop: 'eos',
    confidence,
    steps: ids.length + 1,
    encoder_ms: 5,
    decoder_ms: 4,
    decoder_ms_per_token: 0.5,
  };
}

async function hubWith(env: Record<string, string>, bus: MemoryBus): Promise<RunningHub> {
  const set = await loadHubPluginSet();
  return testHub({ bus, plugins: [...set.plugins.filter((p) => p.name !== ocrText.name && p.name !== 'device-ssh'), ocrText], essential: set.essential, env });
}

describe('ocr-text: GET /fleet/ocr', () => {
  let bus: MemoryBus;
  let hub: RunningHub;
  let bare: RunningHub;
  let bareBus: MemoryBus;
  before(async () => {
    bus = new MemoryBus();
    bareBus = new MemoryBus();
    [hub, bare] = await Promise.all([
      hubWith({ LOOKOUT_HUB_OCR_TOKENIZER_DIR: VOCAB_DIR, LOOKOUT_HUB_OCR_TOOL_TIMEOUT_MS: '1000' }, bus),
      hubWith({}, bareBus),
    ]);
    // A precision device whose tool server is gone: its reads come from the bus only.
    const dead = await freePort();
    for (const b of [bus, bareBus]) {
      await b.publish('devices/precision-1/hello', JSON.stringify(msg.hello('precision-1', ['127.0.0.1'], dead, ['precision'])));
      await b.publish('devices/precision-1/events/ocr', JSON.stringify(read(7, [47, 56], 0.4)));
      await b.publish('devices/precision-1/events/ocr', JSON.stringify(read(7, [47, 55], 0.9)));
      await b.publish('devices/precision-1/events/ocr', JSON.stringify(read(null, [49, 52, 41, 37], 0.7)));
      await b.publish('devices/precision-1/events/ocr', JSON.stringify(read(8, [8, 22, 43, 44, 99], 0.6)));
    }
    for (const h of [hub, bare]) await waitFor('the hello', async () => (await api(h.url, '/fleet/registry?device=precision-1')).body.shadows?.length === 1);
  });
  after(async () => {
    await Promise.all([hub?.close(), bare?.close()]);
    await Promise.all([bus?.close(), bareBus?.close()]);
  });

  it('shows the reads as text, the most confident per track, newest first; the tool server’s failure is the status error', async () => {
    const r = await waitFor('four reads', async () => {
      const a = await api(hub.url, '/fleet/ocr?target=precision-1');
      return a.status === 200 && a.body.tracks === 3 ? a : undefined;
    });
    assert.equal(r.body.device_id, 'precision-1');
    assert.equal(r.body.cascade, null);
    assert.equal(r.body.status_error.code, 'device_unreachable', r.text);
    assert.deepEqual(r.body.tokenizer, { loaded: true, dir: VOCAB_DIR, vocab_size: 64, vocab_matches: null, error: null });
    assert.deepEqual(
      r.body.reads.map((x: { track_id: number | null; text: string; reads_merged: number; unknown_ids: number[] }) => [
        x.track_id,
        x.text,
        x.reads_merged,
        x.unknown_ids,
      ]),
      [
        [8, 'ESé', 1, [99]],
        [null, 'AB123-7', 1, []],
        [7, 'STOPPARK', 2, []],
      ],
    );
    const limited = await api(hub.url, '/fleet/ocr?target=precision-1&limit=1');
    assert.equal(limited.body.reads.length, 1);
    assert.equal(limited.body.tracks, 3);
  });

  it('without tokenizer files the ids stay and the answer says why there is no text', async () => {
    const r = await waitFor('the reads', async () => {
      const a = await api(bare.url, '/fleet/ocr?target=precision-1');
      return a.body.tracks === 3 ? a : undefined;
    });
    assert.equal(r.body.tokenizer.loaded, false);
    assert.match(r.body.tokenizer.error, /set LOOKOUT_HUB_OCR_TOKENIZER_DIR/);
    assert.ok(r.body.reads.every((x: { text: unknown }) => x.text === null));
    assert.deepEqual(r.body.reads[2].token_ids, [47, 55]);
  });

  it('shows a padded read stripped to its fields (det as c, p, b) and never a read with a huge box array', async () => {
    const huge = { ...read(10, [4], 0.99), det: { c: 14, p: 0.8, b: Array.from({ length: 60_000 }, (_, i) => i) } };
    const base = read(9, [47], 0.99);
    const padded = { ...base, pad: 'x'.repeat(100_000), det: { ...base.det, pad: 'x'.repeat(100_000) } };
    // In this order on one bus: once the padded read shows, the huge one before it has been handled.
    await bus.publish('devices/precision-1/events/ocr', JSON.stringify(huge));
    await bus.publish('devices/precision-1/events/ocr', JSON.stringify(padded));
    const r = await waitFor('the padded read', async () => {
      const a = await api(hub.url, '/fleet/ocr?target=precision-1');
      return a.body.reads?.some((x: { track_id: number }) => x.track_id === 9) ? a : undefined;
    });
    const shown = r.body.reads.find((x: { track_id: number }) => x.track_id === 9);
    assert.deepEqual(shown.det, { c: 14, p: 0.8, b: [10, 20, 90, 40] });
    assert.equal('pad' in shown, false);
    assert.ok(r.text.length < 10_000, `the answer is ${r.text.length} characters`);
    assert.equal(
      r.body.reads.some((x: { track_id: number }) => x.track_id === 10),
      false,
      'the huge read is refused',
    );
  });

  it('answers 404 for a device it does not know and 400 naming the field for a bad query', async () => {
    const unknown = await api(hub.url, '/fleet/ocr?target=nobody');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'target_unknown');
    for (const [path, field] of [
      ['/fleet/ocr', 'query.target'],
      ['/fleet/ocr?target=', 'query.target'],
      ['/fleet/ocr?target=precision-1&limit=0', 'query.limit'],
      ['/fleet/ocr?target=precision-1&limit=1e2', 'query.limit'],
    ]) {
      const r = await api(hub.url, path);
      assert.equal(r.status, 400, `${path}: ${r.text}`);
      assert.equal(r.body.error.details.field, field);
    }
  });
});
