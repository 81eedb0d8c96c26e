/**
 * conversational_safety_query on a real `lookout-edge` device (simulated camera, encoder, recorder, detector, tracker)
 * with a describer double on 127.0.0.1: a truthful describer phrases the answer; one that states
 * another person count is overruled and the device's plain answer is returned, saying so (spec 01,
 * "What the service does" 7: models describe, never override counts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { startDescriberDouble, type DescriberDouble } from '../../support/describer-double.js';

const image = join(packageRoot(), 'test', 'fixtures', 'images', 'safety-camera.json');

interface Answer {
  answer: string;
  answer_source: string;
  describer_refused: boolean;
  describer_reason: string | null;
  person_count: number;
  track_count: number;
  detection: string;
  dets_timestamp: string | null;
  recording: { is_writing_data: boolean; storage_health: string } | null;
  recording_reason: string | null;
}

describe('conversational_safety_query against a describer double', () => {
  let broker: EmbeddedBroker;
  let dir: string;
  let device: DeviceProcess;
  let client: Client;
  let describer: DescriberDouble;

  const ask = async (question: string, describe = true): Promise<Answer> => {
    const r = await client.callTool({ name: 'conversational_safety_query', arguments: { question, describe } });
    assert.ok(!r.isError, JSON.stringify(r.content));
    const out: unknown = r.structuredContent;
    return out as Answer;
  };

  before(async () => {
    describer = await startDescriberDouble();
    broker = await EmbeddedBroker.start({ port: 0 });
    dir = await mkdtemp(join(tmpdir(), 'lookout-safety-'));
    device = await startDeviceProcess({
      deviceId: 'cam-safety',
      mqtt: broker.url,
      image,
      layer: 'layer2',
      dataDir: dir,
      env: {
        ENCODE_RESOLUTION: '320x240',
        ENCODE_FPS: '5',
        ENCODE_GOP: '5',
        SIM_SCENARIO: 'people-crossing',
        SAFETY_DESCRIBER_URL: describer.url,
        SAFETY_DESCRIBER_TIMEOUT_MS: '5000',
      },
      readyTimeoutMs: 30_000,
    });
    client = new Client({ name: 'lookout-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(device.ready.tool_url!)));
    // The scene has two walkers: wait until the detector counted someone, so the counts are not all zero.
    const deadline = Date.now() + 30_000;
    while ((await ask('anyone?', false)).person_count === 0) {
      assert.ok(Date.now() < deadline, 'no frame with a person within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    await client?.close();
    await device?.stop();
    await broker?.close();
    await describer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers from the device figures without the describer when describe is false', async () => {
    const a = await ask('how many people are at the door?', false);
    assert.equal(a.answer_source, 'device');
    assert.equal(a.detection, 'running');
    assert.match(a.answer, new RegExp(`^${a.person_count} (people|person) in view`));
    assert.ok(a.dets_timestamp);
    // The recorder's own status, through its service: the figures and the text agree.
    assert.ok(a.recording, a.recording_reason ?? '');
    assert.match(
      a.answer,
      new RegExp(`Recording ${a.recording.is_writing_data ? 'is writing' : 'is not writing'} \\(storage ${a.recording.storage_health}\\)`),
    );
  });

  it('takes the truthful describer’s text, whose count is the device’s', async () => {
    describer.mode = { kind: 'truthful' };
    const a = await ask('how many people are at the door?');
    assert.equal(a.answer_source, 'describer', a.describer_reason ?? '');
    assert.equal(a.describer_refused, false);
    assert.equal(a.answer, `Calm scene: ${a.person_count} people in view.`);
    assert.match(describer.prompts.at(-1)!, /"person_count":/);
  });

  it('overrules the lying describer: its count is refused and the plain answer returned, saying so', async () => {
    describer.mode = { kind: 'lying', people: 9 };
    const a = await ask('how many people are at the door?');
    assert.notEqual(a.person_count, 9);
    assert.equal(a.answer_source, 'device');
    assert.equal(a.describer_refused, true);
    assert.match(a.describer_reason!, /9 people/);
    assert.match(a.answer, new RegExp(`${a.person_count} (people|person) in view`));
    assert.doesNotMatch(a.answer, /9 people/);
  });

  it('refuses an empty question as a tool error', async () => {
    const r = await client.callTool({ name: 'conversational_safety_query', arguments: { question: '' } });
    assert.equal(r.isError, true);
  });
});
