/**
 * Ingest as stages (parse → contract → admission → cache) whose side effects listen: each stage on
 * its own, with the reason it gives, and the listeners hearing the outcomes in stage order. The
 * composed path (Ingest through a real hub) is what ingest.test.ts checks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionStage } from '../../../../../hub/plugins/bus-cache/src/admission-stage.js';
import { classifyAlerts } from '../../../../../hub/plugins/bus-cache/src/alert-classification.js';
import { applyToCache } from '../../../../../hub/plugins/bus-cache/src/cache-stage.js';
import { ContractStage } from '../../../../../hub/plugins/bus-cache/src/contract-stage.js';
import { DeviceCache } from '../../../../../hub/plugins/bus-cache/src/device-cache.js';
import { IngestCounters } from '../../../../../hub/plugins/bus-cache/src/ingest-counters.js';
import { IngestEvents, MAX_ISSUE_CHARS, Refusal } from '../../../../../hub/plugins/bus-cache/src/ingest-events.js';
import { parsePayload, TopicStage, type KnownTopic } from '../../../../../hub/plugins/bus-cache/src/parse-stage.js';
import { msg } from '../../../../integration/hub-helpers.js';

const limits = { maxMessageBytes: 64, maxDepth: 3 };
const deviceLimits = { maxTopics: 10, maxAlerts: 5, maxChunks: 5 };

function known(topic: string): KnownTopic {
  const k = new TopicStage().check(topic);
  assert.ok(!(k instanceof Refusal), `${topic} has a contract`);
  return k;
}

describe('ingest stages', () => {
  it('(a) refuses a topic too long or without a contract, and a payload too big, empty, too deep or not JSON, each with its reason', () => {
    const topics = new TopicStage();
    const long = topics.check(`devices/${'x'.repeat(5000)}/status`);
    assert.ok(long instanceof Refusal);
    assert.deepEqual([long.reason, long.key, long.deviceId, long.topic.length], ['unknown_topic', 'unknown', undefined, 128]);
    const none = topics.check('devices/cam-1/nothing');
    assert.ok(none instanceof Refusal);
    assert.deepEqual([none.reason, none.deviceId, none.suffix], ['unknown_topic', 'cam-1', 'nothing']);
    assert.equal(topics.check('devices/cam-1/status'), topics.check('devices/cam-1/status'), 'a topic is looked up once');

    const status = known('devices/cam-1/status');
    const reasons = [Buffer.alloc(65, 32), Buffer.alloc(0), Buffer.from('[[[[1]]]]'), Buffer.from('{nope')].map((p) => {
      const r = parsePayload(status, p, limits);
      return r instanceof Refusal ? r.reason : 'parsed';
    });
    assert.deepEqual(reasons, ['oversized', 'empty', 'too_deep', 'not_json']);
    assert.deepEqual(parsePayload(status, Buffer.from('{"a":[1]}'), limits), { a: [1] });
  });

  it('(b) refuses a message that breaks its contract, or that names another device than its topic, with a cut issue', () => {
    const stage = new ContractStage();
    const status = known('devices/cam-1/status');
    const good = msg.status('cam-1');
    assert.deepEqual(stage.check(status, good), good);
    const other = stage.check(status, msg.status('cam-2'));
    assert.ok(other instanceof Refusal);
    assert.equal(other.reason, 'schema');
    assert.match(other.issue, /is not the device of its topic/);
    const bad = stage.check(known('devices/cam-1/dets'), { dets: 'x'.repeat(1000) });
    assert.ok(bad instanceof Refusal);
    assert.equal(bad.reason, 'schema');
    assert.ok(new Refusal('t', undefined, 's', 'k', 'schema', 'y'.repeat(1000)).issue.length <= MAX_ISSUE_CHARS);
  });

  it('(c) gives an entry to a hello or a device a rule admits, holds the others while it may, then tells the listeners', () => {
    const events = new IngestEvents();
    const heard: string[] = [];
    events.on('unknownDevice', (_t, id) => heard.push(`unknown ${id}`));
    events.on('deviceRefused', (id) => heard.push(`full ${id}`));
    events.on('evicted', (d, forId) => heard.push(`evicted ${d.deviceId} for ${forId}`));
    const stage = new AdmissionStage({ maxDevices: 1, deviceLimits, hold: { windowMs: 0 }, events, now: () => 0 });
    const payload = Buffer.from('{}');
    assert.equal(stage.enter('cam-1', 'status', 'devices/cam-1/status', payload, false, 0, true), undefined);
    const hello = stage.enter('cam-1', 'hello', 'devices/cam-1/hello', payload, false, 0, false);
    assert.equal(hello?.device.deviceId, 'cam-1');
    assert.equal(hello?.waitedFirst, false, 'what waited for a device goes after its hello');
    assert.equal(stage.enter('cam-2', 'hello', 'devices/cam-2/hello', payload, false, 0, false), undefined);
    stage.rules.admitWhen((id) => id === 'cam-3');
    assert.equal(stage.enter('cam-3', 'status', 'devices/cam-3/status', payload, false, 0, false)?.waitedFirst, true);
    assert.deepEqual(heard, ['unknown cam-1', 'full cam-2', 'evicted cam-1 for cam-3']);
    assert.deepEqual([...stage.devices.keys()], ['cam-3']);
    assert.equal(stage.membership, 3);
  });

  it('(d) stores, and the side effects listen: every stored message is counted, only a newer one (or an event) is applied', () => {
    const events = new IngestEvents();
    const counters = new IngestCounters(events);
    classifyAlerts(events);
    const applied: string[] = [];
    const off = events.on('applied', (device, _key, suffix) => applied.push(`${suffix} ${device.anomalyAlerts.length}`));
    const device = new DeviceCache('cam-1', deviceLimits);
    const t = Date.parse('2026-01-01T00:00:10Z');
    applyToCache(events, device, 'status', 'status', 'devices/cam-1/status', { ...msg.status('cam-1'), timestamp: '2026-01-01T00:00:10Z' }, false, t);
    const older = { ...msg.status('cam-1'), timestamp: '2026-01-01T00:00:09Z' };
    applyToCache(events, device, 'status', 'status', 'devices/cam-1/status', older, true, t + 1);
    const incident = { timestamp: '2026-01-01T00:00:00Z', message: 'someone at the door' };
    applyToCache(events, device, 'events/+', 'events/incident', 'devices/cam-1/events/incident', incident, true, t + 2);
    assert.deepEqual(applied, ['status 0', 'events/incident 1'], 'the alert is classified before later listeners hear of it');
    assert.equal(counters.valid, 3);
    assert.equal(device.anomalyAlerts[0].type, 'incident');
    off();
    applyToCache(events, device, 'status', 'status', 'devices/cam-1/status', msg.status('cam-1'), false, t + 3);
    assert.equal(applied.length, 2, 'a listener removed hears nothing more');
  });
});
