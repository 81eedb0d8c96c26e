/**
 * Ingest as stages (parse → contract → admission → cache) whose side effects listen: each stage on
 * its own, with the reason it gives, and the listeners hearing the outcomes in stage order. The
 * composed path (Ingest through a real hub) is what ingest.test.ts checks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionStage } from '../../../../../hub/plugins/bus-cache/src/admission-stage.js';
import { classifyAlerts } from '../../../../../hub/plugins/bus-cache/src/alert-classification.js';
import { applyToCache, OLDER } from '../../../../../hub/plugins/bus-cache/src/cache-stage.js';
import { ContractStage } from '../../../../../hub/plugins/bus-cache/src/contract-stage.js';
import { DeviceCache } from '../../../../../hub/plugins/bus-cache/src/device-cache.js';
import { IngestCounters } from '../../../../../hub/plugins/bus-cache/src/ingest-counters.js';
import { IngestEvents, MAX_ISSUE_CHARS, Refusal } from '../../../../../hub/plugins/bus-cache/src/ingest-events.js';
import { parsePayload, TopicStage, type KnownTopic } from '../../../../../hub/plugins/bus-cache/src/parse-stage.js';
import { msg } from '../../../../support/hub-helpers.js';

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

  it('(d) stores: a newer message (or an event) changes the entry and says what it held, an older one only its count', () => {
    const device = new DeviceCache('cam-1', deviceLimits);
    const t = Date.parse('2026-01-01T00:00:10Z');
    const first = { ...msg.status('cam-1'), timestamp: '2026-01-01T00:00:10Z' };
    assert.equal(applyToCache(device, false, 'status', first, false, t), undefined);
    const older = { ...msg.status('cam-1'), timestamp: '2026-01-01T00:00:09Z' };
    assert.equal(applyToCache(device, false, 'status', older, true, t + 1), OLDER);
    const newer = { ...msg.status('cam-1', 'offline'), timestamp: '2026-01-01T00:00:11Z' };
    assert.equal(applyToCache(device, false, 'status', newer, false, t + 2), first);
    const event = { timestamp: '2026-01-01T00:00:00Z', message: 'someone at the door' };
    applyToCache(device, true, 'events/incident', { ...event, message: 'later' }, false, t + 3);
    assert.notEqual(applyToCache(device, true, 'events/incident', event, true, t + 4), OLDER, 'an event is one of its own');
  });

  it('the side effects listen: alerts are classified before later listeners hear of a message, refusals are counted', () => {
    const events = new IngestEvents();
    const counters = new IngestCounters(events);
    classifyAlerts(events);
    const heard: string[] = [];
    const off = events.on('applied', (device, _key, suffix) => heard.push(`${suffix} ${device.anomalyAlerts.length}`));
    const device = new DeviceCache('cam-1', deviceLimits);
    const incident = { timestamp: '2026-01-01T00:00:00Z', message: 'someone at the door' };
    events.applied(device, 'events/+', 'events/incident', 'devices/cam-1/events/incident', incident, undefined, false, 1);
    events.applied(device, 'dets', 'dets', 'devices/cam-1/dets', msg.dets(), undefined, false, 2);
    assert.deepEqual(heard, ['events/incident 1', 'dets 1']);
    assert.equal(device.anomalyAlerts[0].type, 'incident');
    off();
    events.applied(device, 'dets', 'dets', 'devices/cam-1/dets', msg.dets(), undefined, false, 3);
    assert.equal(heard.length, 2, 'a listener removed hears nothing more');
    events.refused(new Refusal('devices/cam-1/dets', 'cam-1', 'dets', 'dets', 'schema', 'dets: expected array'), Buffer.from('{}'), 4);
    assert.deepEqual([counters.invalid, counters.invalidByTopic, counters.invalidByReason], [1, { dets: 1 }, { schema: 1 }]);
  });
});
