import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SoapFault } from '../../../../../plugins/onvif/src/soap/soap-fault.js';
import { waitFor } from '../../../../support/wait-for.js';
import { body, elements, harness, messages, parse, text, undeclaredPrefixes } from './support.js';

const pending = Symbol('pending');
/** Whether a promise is still unsettled once everything already queued has run. */
async function stillPending(p: Promise<unknown>): Promise<boolean> {
  const r = await Promise.race([p.then(() => 'settled'), new Promise((resolve) => setImmediate(() => resolve(pending)))]);
  return r === pending;
}

const isFault = (subcode?: string) => (e: unknown) => e instanceof SoapFault && (subcode === undefined || e.subcode === subcode || e.detailSubcode === subcode);

test('CreatePullPointSubscription: own address per subscription, UTC times with Z, duration honoured', async () => {
  const h = harness();
  const a = await h.subscribe('PT600S');
  const b = await h.subscribe('PT60S');
  assert.match(a.path, /^\/onvif\/subscription\/[0-9a-f]+$/);
  assert.notEqual(a.path, b.path);
  assert.equal(text(a.response, 'CurrentTime'), '2025-03-01T12:00:00.000Z');
  assert.equal(text(a.response, 'TerminationTime'), '2025-03-01T12:10:00.000Z');
  assert.equal(text(b.response, 'TerminationTime'), '2025-03-01T12:01:00.000Z');
  assert.deepEqual(undeclaredPrefixes(a.response), []);
  h.events.close();
});

test('CreatePullPointSubscription: absolute dateTime, default lifetime, bad and past times fault', async () => {
  const h = harness();
  const abs = await h.subscribe('2025-03-01T12:05:00Z');
  assert.equal(text(abs.response, 'TerminationTime'), '2025-03-01T12:05:00.000Z');
  h.events.close();
  const h2 = harness();
  const none = parse(await h2.call('CreatePullPointSubscription', '<tev:CreatePullPointSubscription/>'));
  assert.equal(text(none, 'TerminationTime'), '2025-03-01T12:01:00.000Z');
  await assert.rejects(h2.subscribe('soon'), isFault('ter:InvalidArgVal'));
  await assert.rejects(h2.subscribe('2025-03-01T11:00:00Z'), isFault('ter:InvalidArgVal'));
  h2.events.close();
});

test('a bounded number of subscriptions: the next one faults, and a slot frees on Unsubscribe or expiry', async () => {
  const h = harness({ maxSubscriptions: 2 });
  const a = await h.subscribe('PT600S');
  await h.subscribe('PT10S');
  await assert.rejects(h.subscribe(), isFault('ter:TooManySubscriptions'));
  assert.equal(elements(parse(await h.call('Unsubscribe', '<wsnt:Unsubscribe/>', a.path)), 'UnsubscribeResponse').length, 1);
  await h.subscribe();
  await assert.rejects(h.subscribe(), isFault('ter:TooManySubscriptions'));
  h.clock.ms += 11_000; // the PT10S one expires
  await h.subscribe();
  h.events.close();
});

test('Unsubscribe removes: its address answers a fault afterwards', async () => {
  const h = harness();
  const s = await h.subscribe();
  await h.call('Unsubscribe', '<wsnt:Unsubscribe/>', s.path);
  await assert.rejects(h.pull(s.path), isFault('ter:InvalidArgVal'));
  await assert.rejects(h.call('Unsubscribe', '<wsnt:Unsubscribe/>', s.path), isFault());
  await assert.rejects(h.pull('/onvif/subscription/nope'), isFault());
  await assert.rejects(h.pull('/onvif/events_service'), isFault());
  h.events.close();
});

test('expiry honoured: an expired subscription answers a fault; Renew extends it', async () => {
  const h = harness();
  const s = await h.subscribe('PT60S');
  h.clock.ms += 50_000;
  const renewed = parse(await h.call('Renew', '<wsnt:Renew><wsnt:TerminationTime>PT60S</wsnt:TerminationTime></wsnt:Renew>', s.path));
  assert.equal(text(renewed, 'TerminationTime'), '2025-03-01T12:01:50.000Z');
  assert.equal(text(renewed, 'CurrentTime'), '2025-03-01T12:00:50.000Z');
  assert.deepEqual(undeclaredPrefixes(renewed), []);
  h.clock.ms += 30_000; // past the original 60 s, within the renewal
  assert.equal(text(await h.pull(s.path), 'TerminationTime'), '2025-03-01T12:01:50.000Z');
  const abs = parse(await h.call('Renew', '<wsnt:Renew><wsnt:TerminationTime>2025-03-01T12:03:00Z</wsnt:TerminationTime></wsnt:Renew>', s.path));
  assert.equal(text(abs, 'TerminationTime'), '2025-03-01T12:03:00.000Z');
  h.clock.ms = Date.parse('2025-03-01T12:03:00Z');
  await assert.rejects(h.pull(s.path), isFault('ter:InvalidArgVal'));
  await assert.rejects(h.call('Renew', '<wsnt:Renew><wsnt:TerminationTime>PT60S</wsnt:TerminationTime></wsnt:Renew>', s.path), isFault());
  h.events.close();
});

test('a new subscription starts with the property states (Initialized); SetSynchronizationPoint sends them again', async () => {
  const h = harness();
  const s = await h.subscribe();
  const first = messages(await h.pull(s.path));
  assert.deepEqual(
    first.map((m) => [m.topic, m.operation, m.data]),
    [
      ['tns1:RuleEngine/PeopleDetector/People', 'Initialized', { IsPeople: 'false' }],
      ['tns1:RuleEngine/CellMotionDetector/Motion', 'Initialized', { IsMotion: 'false' }],
    ],
  );
  assert.equal(messages(await h.pull(s.path)).length, 0);
  h.events.onDetections([{ c: 0, p: 0.9, b: [10, 10, 50, 120] }], h.clock.ms);
  await h.pull(s.path); // the changes
  const sync = await h.call('SetSynchronizationPoint', '<tev:SetSynchronizationPoint/>', s.path);
  assert.deepEqual(undeclaredPrefixes(parse(sync)), []);
  const again = messages(await h.pull(s.path));
  assert.deepEqual(
    again.map((m) => [m.operation, m.data]),
    [
      ['Initialized', { IsPeople: 'true' }],
      ['Initialized', { IsMotion: 'true' }],
    ],
  );
  h.events.close();
});

test('PullMessages is held, then answered early when an event arrives', async () => {
  const h = harness();
  const s = await h.subscribe();
  await h.pull(s.path);
  const started = Date.now();
  const held = h.pull(s.path, 'PT60S');
  assert.ok(await stillPending(held), 'PullMessages answered before any event');
  h.events.configurationChanged('VideoEncoderConfig_1', 'VideoEncoder');
  const response = await held;
  assert.ok(Date.now() - started < 30_000, 'answered by the event, not the timeout');
  const [m, ...rest] = messages(response);
  assert.equal(rest.length, 0);
  assert.equal(m.topic, 'tns1:Media/ConfigurationChanged');
  assert.equal(m.dialect, 'http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet');
  assert.deepEqual(m.source, { Token: 'VideoEncoderConfig_1', Type: 'VideoEncoder' });
  assert.equal(m.operation, null);
  assert.equal(m.utcTime, '2025-03-01T12:00:00.000Z');
  assert.match(text(response, 'CurrentTime')!, /Z$/);
  assert.match(text(response, 'TerminationTime')!, /Z$/);
  assert.deepEqual(undeclaredPrefixes(response), []);
  h.events.close();
});

test('PullMessages with nothing to send answers empty at its timeout', async () => {
  const h = harness();
  const s = await h.subscribe();
  await h.pull(s.path);
  const started = performance.now();
  const response = await h.pull(s.path, 'PT0.2S');
  assert.ok(performance.now() - started >= 150, 'held for its timeout');
  assert.equal(messages(response).length, 0);
  assert.equal(elements(response, 'PullMessagesResponse').length, 1);
  assert.deepEqual(undeclaredPrefixes(response), []);
  h.events.close();
});

test('PullMessages: MessageLimit honoured, the rest stays queued in order', async () => {
  const h = harness();
  const s = await h.subscribe();
  await h.pull(s.path);
  for (let i = 0; i < 5; i++) h.events.configurationChanged(`T${i}`, 'VideoEncoder');
  assert.deepEqual(
    messages(await h.pull(s.path, 'PT5S', 2)).map((m) => m.source.Token),
    ['T0', 'T1'],
  );
  assert.deepEqual(
    messages(await h.pull(s.path, 'PT5S', 10)).map((m) => m.source.Token),
    ['T2', 'T3', 'T4'],
  );
  h.events.close();
});

test('a subscription queue is bounded: the oldest messages are dropped', async () => {
  const h = harness({ queueLimit: 3 });
  const s = await h.subscribe();
  for (let i = 0; i < 6; i++) h.events.configurationChanged(`T${i}`, 'VideoEncoder');
  assert.deepEqual(
    messages(await h.pull(s.path)).map((m) => m.source.Token),
    ['T3', 'T4', 'T5'],
  );
  h.events.close();
});

test('an aborted PullMessages takes nothing; Unsubscribe ends a held one with a fault; close ends them all', async () => {
  const h = harness();
  const s = await h.subscribe();
  await h.pull(s.path);
  const ac = new AbortController();
  const held = h.pull(s.path, 'PT60S', 100, ac.signal);
  assert.ok(await stillPending(held));
  ac.abort();
  assert.equal(messages(await held).length, 0);

  const held2 = h.pull(s.path, 'PT60S');
  assert.ok(await stillPending(held2));
  await h.call('Unsubscribe', '<wsnt:Unsubscribe/>', s.path);
  await assert.rejects(held2, isFault());

  const t = await h.subscribe();
  await h.pull(t.path);
  const held3 = h.pull(t.path, 'PT60S');
  assert.ok(await stillPending(held3));
  h.events.close();
  await assert.rejects(held3, isFault());
  await assert.rejects(h.subscribe(), isFault());
});

test('PullMessages: a bad or missing Timeout faults', async () => {
  const h = harness();
  const s = await h.subscribe();
  await assert.rejects(
    h.call('PullMessages', '<tev:PullMessages><tev:MessageLimit>5</tev:MessageLimit></tev:PullMessages>', s.path),
    isFault('ter:InvalidArgVal'),
  );
  await assert.rejects(h.pull(s.path, '60'), isFault('ter:InvalidArgVal'));
  h.events.close();
});

test('a topic filter keeps only the topics asked for', async () => {
  const h = harness();
  const filter =
    '<tev:Filter><wsnt:TopicExpression Dialect="http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet">tns1:Media//.</wsnt:TopicExpression></tev:Filter>';
  const s = await h.subscribe('PT60S', filter);
  h.events.onDetections([{ c: 0, p: 0.9, b: [10, 10, 50, 120] }], h.clock.ms);
  h.events.configurationChanged('VideoEncoderConfig_1', 'VideoEncoder');
  assert.deepEqual(
    messages(await h.pull(s.path)).map((m) => m.topic),
    ['tns1:Media/ConfigurationChanged'],
  );
  await assert.rejects(h.subscribe('PT60S', '<tev:Filter><wsnt:TopicExpression Dialect="urn:nope">tns1:Media</wsnt:TopicExpression></tev:Filter>'), isFault());
  h.events.close();
});

test('unknown actions answer ActionNotSupported', async () => {
  const h = harness();
  await assert.rejects(h.call('Subscribe', '<wsnt:Subscribe/>'), isFault('ter:ActionNotSupported'));
  h.events.close();
});

test('an abandoned pull point goes at its termination time with no request and no event to sweep it', async () => {
  const h = harness({ sweepIntervalMs: 10 });
  const s = await h.subscribe('PT10S');
  await h.subscribe('PT600S');
  await h.pull(s.path); // the initial states
  // A PullMessages held on it (a client that went quiet) learns at once that it is gone.
  let settled: 'fault' | 'answer' | undefined;
  h.pull(s.path, 'PT60S').then(
    () => (settled = 'answer'),
    (err: unknown) => (settled = isFault('ter:InvalidArgVal')(err) ? 'fault' : 'answer'),
  );
  h.clock.ms += 11_000;
  await waitFor(() => settled !== undefined, 'the held PullMessages to end when its subscription expires');
  assert.equal(settled, 'fault');
  assert.equal(h.events.size, 1, 'the other one stays');
  h.events.close();
});

test('one client holds at most its share of the pull points; another client still gets one, and so does it after an Unsubscribe', async () => {
  const h = harness({ maxSubscriptions: 4, maxSubscriptionsPerClient: 2 });
  const create = (client: string) =>
    h.events.handle(
      'CreatePullPointSubscription',
      body('<tev:CreatePullPointSubscription><tev:InitialTerminationTime>PT600S</tev:InitialTerminationTime></tev:CreatePullPointSubscription>'),
      '/onvif/events_service',
      new AbortController().signal,
      client,
    );
  const first = parse(await create('admin@10.0.0.5'));
  await create('admin@10.0.0.5');
  await assert.rejects(create('admin@10.0.0.5'), isFault('ter:TooManySubscriptions'));
  await create('admin@10.0.0.6');
  await h.call('Unsubscribe', '<wsnt:Unsubscribe/>', new URL(text(first, 'Address')!).pathname);
  await create('admin@10.0.0.5');
  h.events.close();
});
