import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PeerTable } from '../../../../plugins/peer-mesh/src/peer-table.js';

/** Monotonic and wall clocks the test moves by hand: `advance` moves both, `stepWall` only the wall clock (an NTP step). */
function clock(start = 1_000_000) {
  let mono = start;
  let wall = 1_800_000_000_000;
  return {
    monotonic: () => mono,
    wallNow: () => wall,
    advance: (ms: number) => {
      mono += ms;
      wall += ms;
    },
    stepWall: (ms: number) => (wall += ms),
  };
}

const table = (c: ReturnType<typeof clock>, maxPeers = 8) =>
  new PeerTable({ monotonic: c.monotonic, wallNow: c.wallNow, suspectMs: 600, downMs: 1000, dropMs: 5000, maxPeers });

test('a peer is down until heard, up while heard within the suspect time, suspect until the down time, then down; heard again, up', () => {
  const c = clock();
  const t = table(c);
  assert.equal(t.announce({ deviceId: 'cam-2', address: '127.0.0.3', meshPort: 4000, source: 'hello' }), 'added');
  const peer = t.get('cam-2')!;
  assert.equal(t.stateOf(peer), 'down');
  t.heard('cam-2', '127.0.0.3', 4000, 8777);
  assert.equal(t.stateOf(peer), 'up');
  c.advance(599);
  assert.equal(t.stateOf(peer), 'up');
  c.advance(1);
  assert.equal(t.stateOf(peer), 'suspect');
  c.advance(399);
  assert.equal(t.stateOf(peer), 'suspect');
  c.advance(1);
  assert.equal(t.stateOf(peer), 'down');
  t.heard('cam-2', '127.0.0.3', 4000, 8777);
  assert.equal(t.stateOf(peer), 'up');
});

test('a sweep reports each change of state once', () => {
  const c = clock();
  const t = table(c);
  t.announce({ deviceId: 'cam-2', address: '127.0.0.3', meshPort: 4000, source: 'hello' });
  assert.deepEqual(t.sweep(), []);
  t.heard('cam-2', '127.0.0.3', 4000, null);
  assert.deepEqual(t.sweep(), [{ deviceId: 'cam-2', from: 'down', to: 'up' }]);
  assert.deepEqual(t.sweep(), []);
  c.advance(700);
  assert.deepEqual(t.sweep(), [{ deviceId: 'cam-2', from: 'up', to: 'suspect' }]);
  c.advance(700);
  assert.deepEqual(t.sweep(), [{ deviceId: 'cam-2', from: 'suspect', to: 'down' }]);
});

test('a peer is where its datagrams come from; a hello moves a peer found by hello, not one the operator configured', () => {
  const c = clock();
  const t = table(c);
  t.announce({ deviceId: 'cam-2', address: '127.0.0.3', meshPort: 4000, source: 'hello' });
  assert.equal(t.announce({ deviceId: 'cam-2', address: '127.0.0.3', meshPort: 4000, source: 'hello' }), 'same');
  assert.equal(t.announce({ deviceId: 'cam-2', address: '127.0.0.3', meshPort: 4100, sidecarPort: 9000, source: 'hello' }), 'updated');
  assert.deepEqual([t.get('cam-2')!.meshPort, t.get('cam-2')!.sidecarPort], [4100, 9000]);
  t.announce({ deviceId: 'cam-3', address: '127.0.0.4', meshPort: 5000, source: 'config' });
  assert.equal(t.announce({ deviceId: 'cam-3', address: '127.0.0.9', meshPort: 5999, source: 'hello' }), 'same');
  assert.equal(t.get('cam-3')!.address, '127.0.0.4');
  t.heard('cam-3', '127.0.0.5', 5001, null);
  assert.deepEqual([t.get('cam-3')!.address, t.get('cam-3')!.meshPort, t.get('cam-3')!.source], ['127.0.0.5', 5001, 'config']);
  assert.equal(t.heard('cam-9', '127.0.0.9', 1, null), undefined, 'a stranger is not added by being heard');
});

test('the table is bounded: a newcomer replaces the longest-silent down peer found by hello, else it is refused', () => {
  const c = clock();
  const t = table(c, 3);
  t.announce({ deviceId: 'conf', address: '127.0.0.2', meshPort: 1, source: 'config' });
  t.announce({ deviceId: 'old', address: '127.0.0.3', meshPort: 1, source: 'hello' });
  t.announce({ deviceId: 'live', address: '127.0.0.4', meshPort: 1, source: 'hello' });
  t.heard('live', '127.0.0.4', 1, null);
  assert.equal(t.announce({ deviceId: 'new-1', address: '127.0.0.5', meshPort: 1, source: 'hello' }), 'added');
  assert.deepEqual(
    t
      .list()
      .map((p) => p.deviceId)
      .sort(),
    ['conf', 'live', 'new-1'],
  );
  t.heard('new-1', '127.0.0.5', 1, null);
  assert.equal(
    t.announce({ deviceId: 'new-2', address: '127.0.0.6', meshPort: 1, source: 'hello' }),
    'refused',
    'every hello peer is up; the configured one stays',
  );
  c.advance(5000);
  t.heard('live', '127.0.0.4', 1, null);
  assert.equal(t.announce({ deviceId: 'new-2', address: '127.0.0.6', meshPort: 1, source: 'hello' }), 'added');
  assert.equal(t.get('new-1'), undefined, 'the down one went');
  for (let i = 0; i < 1000; i++) t.announce({ deviceId: `flood-${i}`, address: '127.0.0.7', meshPort: 1, source: 'hello' });
  assert.equal(t.size, 3);
});

test('liveness runs on the monotonic clock: a wall-clock step back neither keeps a silent peer up nor a step forward kills a live one', () => {
  const c = clock();
  const t = table(c);
  t.announce({ deviceId: 'cam-2', address: '127.0.0.3', meshPort: 4000, source: 'hello' });
  t.heard('cam-2', '127.0.0.3', 4000, null);
  const peer = t.get('cam-2')!;
  assert.equal(peer.lastSeenAt, c.wallNow(), 'last seen is shown in wall time');
  c.stepWall(-3_600_000);
  c.advance(1000);
  assert.equal(t.stateOf(peer), 'down', 'silent past the down time, whatever the wall clock did');
  t.heard('cam-2', '127.0.0.3', 4000, null);
  c.stepWall(3_600_000);
  assert.equal(t.stateOf(peer), 'up', 'heard just now');
});

test('a peer found by hello and never heard leaves after the down time; one heard once, or configured, stays', () => {
  const c = clock();
  const t = table(c);
  t.announce({ deviceId: 'ghost', address: '127.0.0.3', meshPort: 1, source: 'hello' });
  t.announce({ deviceId: 'heard', address: '127.0.0.4', meshPort: 1, source: 'hello' });
  t.announce({ deviceId: 'conf', address: '127.0.0.5', meshPort: 1, source: 'config' });
  t.heard('heard', '127.0.0.4', 1, null);
  c.advance(999);
  assert.deepEqual(t.dropUnheard(), []);
  // A hello moving it again does not restart its time.
  assert.equal(t.announce({ deviceId: 'ghost', address: '127.0.0.6', meshPort: 1, source: 'hello' }), 'updated');
  c.advance(1);
  assert.deepEqual(t.dropUnheard(), ['ghost']);
  assert.deepEqual(
    t
      .list()
      .map((p) => p.deviceId)
      .sort(),
    ['conf', 'heard'],
  );
  c.advance(60_000);
  assert.deepEqual(t.dropUnheard(), [], 'down but once heard, and the operator’s, stay');
  assert.equal(t.announce({ deviceId: 'ghost', address: '127.0.0.3', meshPort: 1, source: 'hello' }), 'added', 'a later hello brings it back');
});

test('a peer found by hello, heard and then silent past the drop time leaves (a phantom heard once does not stay down for good); configured peers stay', () => {
  const c = clock();
  const t = table(c);
  t.announce({ deviceId: 'phantom', address: '127.0.0.3', meshPort: 1, source: 'hello' });
  t.announce({ deviceId: 'live', address: '127.0.0.4', meshPort: 1, source: 'hello' });
  t.announce({ deviceId: 'conf', address: '127.0.0.5', meshPort: 1, source: 'config' });
  for (const id of ['phantom', 'live', 'conf']) t.heard(id, '127.0.0.9', 1, null);
  c.advance(4000);
  t.heard('live', '127.0.0.4', 1, null);
  assert.deepEqual(t.dropSilent(), []);
  assert.equal(t.stateOf(t.get('phantom')!), 'down');
  c.advance(1000);
  assert.deepEqual(t.dropSilent(), ['phantom']);
  c.advance(60_000);
  assert.deepEqual(t.dropSilent(), ['live'], 'silent past the drop time in its turn');
  assert.deepEqual(
    t.list().map((p) => p.deviceId),
    ['conf'],
    'the operator’s peer stays, down',
  );
});
