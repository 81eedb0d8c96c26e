import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubscriptionTable, type SubscriptionEntry } from '../../../../lib/mqtt/subscription-table.js';

const handler = () => () => undefined;

test('handlers match by filter, once per handler, and the answer follows every change to the table', () => {
  const table = new SubscriptionTable();
  const a = handler();
  const b = handler();
  const telemetry: SubscriptionEntry = { filter: 'devices/+/telemetry', handler: a, qos: 1 };
  const all: SubscriptionEntry = { filter: 'devices/+/telemetry/#', handler: a, qos: 1 };
  table.add(telemetry);
  table.add(all);
  assert.deepEqual(table.handlersFor('devices/cam-1/telemetry'), [a], 'overlapping filters of one handler: one call');
  assert.deepEqual(table.handlersFor('devices/cam-1/telemetry'), [a], 'asked again (cached)');

  const other: SubscriptionEntry = { filter: 'devices/cam-1/#', handler: b, qos: 0 };
  table.add(other);
  assert.deepEqual(table.handlersFor('devices/cam-1/telemetry'), [a, b], 'a handler added later is seen');
  assert.equal(table.remove(telemetry), true, 'no other entry uses devices/+/telemetry: time to unsubscribe it');
  assert.deepEqual(table.handlersFor('devices/cam-1/telemetry'), [a, b], 'a is still there through devices/+/telemetry/#');
  assert.equal(table.remove(other), true);
  assert.deepEqual(table.handlersFor('devices/cam-1/telemetry'), [a], 'a removed handler is not called any more');
  table.clear();
  assert.deepEqual(table.handlersFor('devices/cam-1/telemetry'), []);
});

test('wildcard filters never match $-topics, and many distinct topics keep answering correctly', () => {
  const table = new SubscriptionTable();
  const h = handler();
  table.add({ filter: '#', handler: h, qos: 0 });
  assert.deepEqual(table.handlersFor('$SYS/broker/uptime'), []);
  for (let i = 0; i < 25_000; i++) assert.equal(table.handlersFor(`devices/d${i}/dets`).length, 1);
  assert.deepEqual(table.handlersFor('devices/d1/dets'), [h]);
});

test('long topics are matched each time without being kept, and stay correct', () => {
  const table = new SubscriptionTable();
  const h = handler();
  table.add({ filter: 'devices/+/dets', handler: h, qos: 1 });
  for (let i = 0; i < 300; i++) assert.deepEqual(table.handlersFor(`devices/${String(i).padStart(20_000, 'x')}/dets`), [h]);
  assert.deepEqual(table.handlersFor(`devices/${'y'.repeat(20_000)}/other`), []);
});

test('the topics of a large fleet stay kept, and topics of one shape share their matches', () => {
  const table = new SubscriptionTable();
  const a = handler();
  const b = handler();
  for (const filter of ['devices/+/hello', 'devices/+/status', 'devices/+/telemetry/#', 'devices/+/dets']) table.add({ filter, handler: a, qos: 1 });
  table.add({ filter: 'devices/+/dets', handler: b, qos: 1 });
  // 6 000 devices × 4 topics: the 10 000 topics the table once kept were passed at 2 500 devices,
  // and it then dropped all of them again and again (every message matched every filter anew).
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 6000; i++) for (const t of ['hello', 'status', 'telemetry', 'dets']) table.handlersFor(`devices/cam-${i}/${t}`);
  }
  assert.equal(table.keptTopics, 24_000);
  assert.deepEqual(table.handlersFor('devices/cam-7/dets'), [a, b]);
  assert.equal(table.handlersFor('devices/cam-7/dets'), table.handlersFor('devices/cam-5999/dets'), 'one shared answer');
  assert.deepEqual(table.handlersForCopy('devices/cam-7/dets', ['devices/+/dets']), [a, b]);
  assert.deepEqual(table.handlersForCopy('devices/cam-7/status', ['devices/+/dets']), []);
});
