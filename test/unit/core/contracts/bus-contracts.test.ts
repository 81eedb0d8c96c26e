import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUS_CONTRACTS,
  BUS_SUFFIXES,
  DetsMessageSchema,
  EventMessageSchema,
  StatusMessageSchema,
  TelemetryMessageSchema,
  WIRE_LIMITS,
  busTopic,
  contractForTopic,
  parseWire,
  parseWirePayload,
} from '../../../../core/src/contracts/index.js';
import { ManifestSchema } from '../../../../core/src/plugin/manifest.js';
import { isLookoutError } from '../../../../core/src/errors/lookout-error.js';
import { topicMatches } from '../../../../core/src/bus/bus-port.js';
import { examples } from '../../../support/contract-examples.js';

describe('BUS_CONTRACTS (the spec bus table)', () => {
  it('has exactly the spec suffixes plus hello', () => {
    assert.deepEqual([...BUS_SUFFIXES].sort(), [
      'data_manifest',
      'dets',
      'events/+',
      'health',
      'hello',
      'responses',
      'status',
      'telemetry',
      'telemetry/can',
      'telemetry/wifi',
    ]);
  });
  it('status alone is retained; every QoS is 1', () => {
    for (const s of BUS_SUFFIXES) {
      assert.equal(BUS_CONTRACTS[s].retain, s === 'status', s);
      assert.equal(BUS_CONTRACTS[s].qos, 1, s);
    }
  });
  it('telemetry and dets carry the accepted 3 to 15 Hz range; telemetry is mirrored on shadow/', () => {
    for (const s of ['telemetry', 'dets'] as const) {
      assert.deepEqual(BUS_CONTRACTS[s].rateHz, { nominal: 10, min: 3, max: 15 });
    }
    assert.equal(BUS_CONTRACTS.telemetry.mirror, true);
    assert.equal(BUS_CONTRACTS.dets.mirror, false);
    assert.equal(BUS_CONTRACTS.status.rate, 'on change and last-will');
    assert.equal(WIRE_LIMITS.staleSec, 120);
  });
  it('each suffix validates its own example and refuses the others', () => {
    const byKey = {
      status: examples.status(),
      health: examples.health(),
      telemetry: examples.telemetry(),
      'telemetry/wifi': examples.wifi(),
      'telemetry/can': examples.can(),
      dets: examples.dets(),
      data_manifest: examples.dataManifest(),
      responses: examples.response(),
      'events/+': examples.event(),
      hello: examples.hello(),
    };
    for (const s of BUS_SUFFIXES) assert.ok(BUS_CONTRACTS[s].schema.safeParse(byKey[s]).success, s);
    assert.equal(BUS_CONTRACTS.dets.schema.safeParse(examples.telemetry()).success, false);
    assert.equal(BUS_CONTRACTS.telemetry.schema.safeParse(examples.dets()).success, false);
    assert.equal(BUS_CONTRACTS.status.schema.safeParse(examples.health()).success, false);
  });
  it('busTopic gives manifest topic declarations the loader accepts', () => {
    const topics = [busTopic('dets'), busTopic('telemetry'), busTopic('events/incident'), busTopic('events/+')];
    assert.equal(topics[0].schema, DetsMessageSchema);
    assert.equal(topics[1].mirror, true);
    assert.equal(topics[2].schema, EventMessageSchema);
    assert.equal(topics[2].suffix, 'events/incident');
    const parsed = ManifestSchema.safeParse({ name: 'detector', version: '1.0.0', core: '^1', topics });
    assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues));
    assert.throws(() => busTopic('nope' as 'dets'), /no bus contract/);
  });
});

describe('contractForTopic', () => {
  it('resolves devices/ and shadow/ topics to their contract', () => {
    const t = contractForTopic('devices/dev-a/telemetry');
    assert.equal(t?.namespace, 'devices');
    assert.equal(t?.deviceId, 'dev-a');
    assert.equal(t?.suffix, 'telemetry');
    assert.equal(t?.contract.schema, TelemetryMessageSchema);
    const m = contractForTopic('shadow/dev-b/telemetry/wifi');
    assert.equal(m?.namespace, 'shadow');
    assert.equal(m?.key, 'telemetry/wifi');
    assert.equal(contractForTopic('devices/dev-a/status')?.contract.schema, StatusMessageSchema);
    assert.equal(contractForTopic('devices/dev-a/hello')?.key, 'hello');
  });
  it('maps events/<type>, nested event types and bare events to events/+', () => {
    for (const topic of ['devices/d/events/incident', 'devices/d/events/automation_log', 'devices/d/events/plugin/hello', 'devices/d/events']) {
      const r = contractForTopic(topic);
      assert.equal(r?.key, 'events/+', topic);
      assert.equal(r?.contract.schema, EventMessageSchema, topic);
    }
    assert.equal(contractForTopic('devices/d/events/incident')?.suffix, 'events/incident');
  });
  it('every topic it resolves matches one of the hub subscriptions (spec defaults plus hello)', () => {
    const filters = [
      'devices/+/status',
      'devices/+/telemetry',
      'devices/+/telemetry/#',
      'devices/+/dets',
      'devices/+/health',
      'devices/+/data_manifest',
      'devices/+/responses',
      'devices/+/events',
      'devices/+/events/#',
      'devices/+/hello',
    ];
    for (const s of ['status', 'telemetry', 'telemetry/wifi', 'telemetry/can', 'dets', 'health', 'data_manifest', 'responses', 'events/x', 'hello']) {
      const topic = `devices/dev-a/${s}`;
      assert.ok(contractForTopic(topic), topic);
      assert.ok(
        filters.some((f) => topicMatches(f, topic)),
        topic,
      );
    }
  });
  it('is undefined for cmd topics, unknown suffixes, wildcards, empty levels and other namespaces', () => {
    for (const topic of [
      'devices/dev-a/cmd/reboot',
      'devices/dev-a/unknown',
      'devices/dev-a',
      'devices//status',
      'devices/+/status',
      'devices/#',
      'devices/dev-a/events/+',
      'devices/dev-a/events/',
      'devices/dev-a/events//x',
      'devices/dev-a/status/',
      'other/dev-a/status',
      'status',
      '',
      '/devices/dev-a/status',
      'devices/dev-a/telemetry/#',
      'devices/dev-a/events/+/x',
    ]) {
      assert.equal(contractForTopic(topic), undefined, topic);
    }
  });
});

describe('parseWire and parseWirePayload', () => {
  it('return the parsed message', () => {
    assert.equal(parseWire(DetsMessageSchema, examples.dets(), 'dets').person_count, 1);
    assert.equal(parseWirePayload(DetsMessageSchema, Buffer.from(JSON.stringify(examples.dets())), 'dets').camera_id, 'shadow1');
  });
  it('throw message_invalid naming the contract and the field', () => {
    assert.throws(
      () => parseWire(DetsMessageSchema, { ...examples.dets(), person_count: -1 }, 'dets'),
      (err: unknown) => isLookoutError(err, 'message_invalid') && /dets/.test(err.message) && /person_count/.test(err.message),
    );
    assert.throws(
      () => parseWirePayload(DetsMessageSchema, Buffer.from([0xff, 0x00, 0x7b]), 'dets'),
      (err: unknown) => isLookoutError(err, 'message_invalid') && /not JSON/.test(err.message),
    );
  });
});
