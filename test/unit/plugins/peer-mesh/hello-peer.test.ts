import assert from 'node:assert/strict';
import { test } from 'node:test';
import { peerFromHello } from '../../../../plugins/peer-mesh/src/hello-peer.js';
import { MeshNetworks } from '../../../../plugins/peer-mesh/src/mesh-networks.js';

const self = { deviceId: 'cam-1', listenHost: '127.0.0.2', networks: new MeshNetworks(['127.0.0.0/8']) };

const hello = (deviceId: string, over: Record<string, unknown> = {}) =>
  Buffer.from(
    JSON.stringify({
      timestamp: new Date().toISOString(),
      device_id: deviceId,
      labels: ['front_door'],
      roles: ['camera'],
      ips: ['127.0.0.3'],
      ports: { tools: 9000, mesh: 11600, sidecar: 8800 },
      image: 'camera',
      layer: 'layer0',
      versions: { runtime: '0.1.0' },
      ...over,
    }),
  );

test('a hello makes a peer at its usable address with its mesh and sidecar ports', () => {
  assert.deepEqual(peerFromHello('devices/cam-2/hello', hello('cam-2'), self), {
    kind: 'peer',
    announce: { deviceId: 'cam-2', address: '127.0.0.3', meshPort: 11600, sidecarPort: 8800, source: 'hello' },
  });
});

test('a hello on devices/cam-9/hello claiming device_id cam-2 is refused: the topic, which the broker ties to the sender, names the device', () => {
  assert.deepEqual(peerFromHello('devices/cam-9/hello', hello('cam-2'), self), { kind: 'refused', reason: 'topic_mismatch', deviceId: 'cam-9' });
  assert.deepEqual(peerFromHello('devices/cam-9/hello', hello('cam-1'), self), { kind: 'refused', reason: 'topic_mismatch', deviceId: 'cam-9' }, 'nor us');
});

test('a hello whose addresses are multicast, broadcast, unspecified or outside the mesh networks is refused', () => {
  for (const ips of [['224.0.0.251'], ['255.255.255.255'], ['0.0.0.0'], ['127.255.255.255'], ['10.1.2.3'], ['fd00::1']])
    assert.deepEqual(peerFromHello('devices/cam-2/hello', hello('cam-2', { ips }), self), { kind: 'refused', reason: 'no_address', deviceId: 'cam-2' }, ips[0]);
});

test('our own hello, one without a mesh port and anything that is not a hello change nothing and count nothing', () => {
  assert.deepEqual(peerFromHello('devices/cam-1/hello', hello('cam-1'), self), { kind: 'ignored' });
  assert.deepEqual(peerFromHello('devices/cam-2/hello', hello('cam-2', { ports: { tools: 9000 } }), self), { kind: 'ignored' });
  assert.deepEqual(peerFromHello('devices/cam-2/hello', Buffer.from('{"device_id":"cam-2"'), self), { kind: 'ignored' });
  assert.deepEqual(peerFromHello('devices/cam-2/hello', Buffer.from('{"device_id":"cam-2"}'), self), { kind: 'ignored' });
});
