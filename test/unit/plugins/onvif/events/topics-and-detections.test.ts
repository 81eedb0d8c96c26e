import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NS } from '../../../../../plugins/onvif/src/soap/namespaces.js';
import { parseDuration, parseTerminationTime } from '../../../../../plugins/onvif/src/events/times.js';
import { elements, harness, messages, parse, undeclaredPrefixes, WSTOP } from './support.js';

test('GetEventProperties: the topic set, every prefix declared', async () => {
  const h = harness();
  const response = parse(await h.call('GetEventProperties', '<tev:GetEventProperties/>'));
  assert.deepEqual(undeclaredPrefixes(response), []);
  const topics = elements(response, '*')
    .filter((e) => e.getAttributeNS(WSTOP, 'topic') === 'true')
    .map((e) => {
      const path: string[] = [];
      for (let n: typeof e | null = e; n && n.localName !== 'TopicSet'; n = n.parentNode as typeof e | null) path.unshift(n.localName!);
      const items = (where: string) =>
        elements(e, where)
          .flatMap((w) => elements(w, 'SimpleItemDescription'))
          .map((i) => i.getAttribute('Name'));
      return {
        path: path.join('/'),
        isProperty: elements(e, 'MessageDescription')[0].getAttribute('IsProperty'),
        source: items('Source'),
        data: items('Data'),
      };
    });
  assert.deepEqual(
    topics.map((t) => [t.path, t.isProperty, t.data]),
    [
      ['RuleEngine/PeopleDetector/People', 'true', ['IsPeople']],
      ['RuleEngine/CellMotionDetector/Motion', 'true', ['IsMotion']],
      ['RuleEngine/ObjectDetection/Person', 'false', ['b', 'p', 'conf', 'track_id']],
      ['Media/ConfigurationChanged', 'false', []],
    ],
  );
  assert.deepEqual(topics[3].source, ['Token', 'Type']);
  const ruleEngine = elements(response, 'RuleEngine')[0];
  assert.equal(ruleEngine.namespaceURI, NS.tns1);
  assert.equal(elements(response, 'TopicExpressionDialect')[0].textContent, 'http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet');
  const caps = parse(await h.call('GetServiceCapabilities', '<tev:GetServiceCapabilities/>'));
  assert.deepEqual(undeclaredPrefixes(caps), []);
  assert.equal(elements(caps, 'Capabilities')[0].getAttribute('MaxPullPoints'), '3');
  h.events.close();
});

test('person events: one per class 0 detection with b, p, conf and track_id; other classes none', async () => {
  const h = harness();
  const s = await h.subscribe();
  await h.pull(s.path);
  const at = Date.parse('2025-03-01T12:00:01.250Z');
  h.events.onDetections(
    [
      { c: 0, p: 0.91234, b: [10, 20.04, 50, 120], track_id: 7 },
      { c: 2, p: 0.8, b: [100, 100, 200, 150] },
      { c: 0, p: 0.5, b: [300, 20, 340, 110] },
    ],
    at,
  );
  const response = await h.pull(s.path);
  assert.deepEqual(undeclaredPrefixes(response), []);
  const persons = messages(response).filter((m) => m.topic === 'tns1:RuleEngine/ObjectDetection/Person');
  assert.deepEqual(
    persons.map((m) => m.data),
    [
      { b: '10,20,50,120', p: '0.9123', conf: '0.9123', track_id: '7' },
      { b: '300,20,340,110', p: '0.5', conf: '0.5' },
    ],
  );
  assert.equal(persons[0].operation, null);
  assert.equal(persons[0].utcTime, '2025-03-01T12:00:01.250Z');
  assert.equal(persons[0].source.VideoSourceConfigurationToken, 'VideoSourceConfig_1');
  h.events.close();
});

test('IsPeople: true when a person appears, false only after the hold time without one', async () => {
  const h = harness({ holdMs: 3000 });
  const s = await h.subscribe();
  await h.pull(s.path);
  const people = async () =>
    messages(await h.pull(s.path))
      .filter((m) => m.topic === 'tns1:RuleEngine/PeopleDetector/People')
      .map((m) => [m.operation, m.data.IsPeople, m.source.Rule]);
  const t0 = 1_000_000;
  const person = { c: 0, p: 0.9, b: [10, 10, 50, 120] };
  h.events.onDetections([], t0);
  assert.deepEqual(await people(), []);
  h.events.onDetections([person], t0 + 200);
  assert.deepEqual(await people(), [['Changed', 'true', 'PeopleDetector']]);
  h.events.onDetections([person], t0 + 400);
  h.events.onDetections([], t0 + 600);
  h.events.onDetections([], t0 + 3000); // 2.8 s without a person: still held
  assert.deepEqual(await people(), []);
  h.events.onDetections([], t0 + 3400);
  assert.deepEqual(await people(), [['Changed', 'false', 'PeopleDetector']]);
  h.events.onDetections([], t0 + 5000);
  assert.deepEqual(await people(), []);
  h.events.close();
});

test('IsMotion: a box appearing or moving between batches; a still box is no motion; false after the hold time', async () => {
  const h = harness({ holdMs: 1000 });
  const s = await h.subscribe();
  await h.pull(s.path);
  const motion = async () =>
    messages(await h.pull(s.path))
      .filter((m) => m.topic === 'tns1:RuleEngine/CellMotionDetector/Motion')
      .map((m) => m.data.IsMotion);
  const car = (x: number, jitter = 0) => ({ c: 2, p: 0.8, b: [x + jitter, 100, x + 100, 160 + jitter] });
  h.events.onDetections([car(0)], 0); // appears
  assert.deepEqual(await motion(), ['true']);
  for (let t = 200; t <= 1400; t += 200) h.events.onDetections([car(0, t % 400 ? 1 : 0)], t); // still, with a pixel of jitter
  assert.deepEqual(await motion(), ['false']);
  h.events.onDetections([car(30)], 1600); // moved
  assert.deepEqual(await motion(), ['true']);
  // Tracked boxes match by track_id: a box that jumps but keeps its id is a move, the same for a new id.
  h.events.onDetections([], 3000);
  assert.deepEqual(await motion(), ['false']);
  h.events.onDetections([{ ...car(0), track_id: 1 }], 3200);
  assert.deepEqual(await motion(), ['true']);
  h.events.close();
});

test('states decay when detection batches stop coming', async () => {
  const h = harness({ holdMs: 100, idleMs: 100 });
  const s = await h.subscribe();
  await h.pull(s.path);
  h.events.onDetections([{ c: 0, p: 0.9, b: [10, 10, 50, 120] }], 5000);
  await h.pull(s.path);
  const falls: string[] = [];
  while (falls.length < 2) {
    for (const m of messages(await h.pull(s.path, 'PT5S'))) falls.push(`${m.data.IsPeople ?? m.data.IsMotion}`);
  }
  assert.deepEqual(falls, ['false', 'false']);
  h.events.close();
});

test('xs:duration and termination times', () => {
  assert.equal(parseDuration('PT60S'), 60_000);
  assert.equal(parseDuration('PT1M30S'), 90_000);
  assert.equal(parseDuration('PT0.5S'), 500);
  assert.equal(parseDuration('P1DT1H'), 90_000_000);
  assert.equal(parseDuration('-PT5S'), -5000);
  for (const bad of ['P', 'PT', '60', 'PT5', 'P1DT', 'pt5s']) assert.equal(parseDuration(bad), undefined, bad);
  const now = Date.parse('2025-03-01T12:00:00Z');
  assert.equal(parseTerminationTime('PT10S', now), now + 10_000);
  assert.equal(parseTerminationTime('2025-03-01T13:00:00+01:00', now), now);
  assert.equal(parseTerminationTime('2025-03-01T12:00:05', now), now + 5000);
  assert.equal(parseTerminationTime('tomorrow', now), undefined);
});
