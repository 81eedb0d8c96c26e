import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { LateBus } from '../../../edge/src/late-bus.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('LateBus (plugins start before the device connects)', () => {
  it('answers subscribe at once and makes the subscription at attach', async () => {
    const late = new LateBus();
    const got: string[] = [];
    await late.subscribe('devices/x/cmd/#', (topic) => got.push(topic));
    const dropped = await late.subscribe('devices/x/other', (topic) => got.push(topic));
    await dropped();
    assert.equal(late.connected, false);
    const inner = new MemoryBus();
    await inner.publish('devices/x/cmd/retained', 'r', { retain: true });
    await late.attach(inner);
    await inner.publish('devices/x/cmd/tool', '{}');
    await inner.publish('devices/x/other', '{}');
    assert.deepEqual(got, ['devices/x/cmd/retained', 'devices/x/cmd/tool']);
    assert.equal(late.connected, true);
    await late.close();
  });

  it('keeps early publishes for the connection and sends them in order at flush', async () => {
    const late = new LateBus();
    await late.publish('a', '1');
    await late.publish('b', '2', { retain: true });
    const inner = new MemoryBus();
    await late.attach(inner);
    assert.equal(inner.published.length, 0);
    await late.flush();
    assert.deepEqual(
      inner.published.map((m) => [m.topic, m.payload.toString(), m.options.retain ?? false]),
      [
        ['a', '1', false],
        ['b', '2', true],
      ],
    );
    await late.publish('c', '3');
    assert.equal(inner.published.at(-1)!.topic, 'c');
    await late.close();
  });

  it('runs connect listeners only once the real bus connects, and not after removal', async () => {
    const late = new LateBus();
    let kept = 0;
    let removed = 0;
    late.onConnect(() => kept++);
    const off = late.onConnect(() => removed++);
    off();
    await tick();
    assert.equal(kept, 0);
    await late.attach(new MemoryBus());
    await tick();
    assert.deepEqual([kept, removed], [1, 0]);
    await late.close();
    await assert.rejects(late.publish('x', 'y'), { code: 'bus_closed' });
  });
});
