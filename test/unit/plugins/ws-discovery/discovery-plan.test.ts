import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NetworkInterfaceInfo } from 'node:os';
import { discoveryScopes } from '../../../../plugins/ws-discovery/src/discovery-scopes.js';
import {
  announceAddresses,
  announceHost,
  answersSender,
  networkPlan,
  replyAddress,
  replyHost,
  urlHost,
} from '../../../../plugins/ws-discovery/src/network-plan.js';
import { RecentIds } from '../../../../plugins/ws-discovery/src/recent-ids.js';
import { discoveryPort } from '../../../../plugins/ws-discovery/src/index.js';

const nic = (address: string, cidr: string, internal = false): NetworkInterfaceInfo => ({
  address,
  cidr,
  internal,
  family: 'IPv4',
  netmask: '',
  mac: '00:00:00:00:00:00',
});
const interfaces = { lo: [nic('127.0.0.1', '127.0.0.1/8', true)], eth0: [nic('192.168.1.20', '192.168.1.20/24')], eth1: [nic('10.9.0.7', '10.9.0.7/16')] };

test('a simulated device, or one on loopback, joins and speaks on 127.0.0.1 only and answers only local senders', () => {
  for (const info of [{ source: 'sim' as const, listenHost: '0.0.0.0' }, { listenHost: '127.0.0.1' }, { source: 'sim' as const, listenHost: '127.0.0.1' }]) {
    const plan = networkPlan(info);
    assert.equal(plan.kind, 'loopback');
    assert.deepEqual(announceAddresses(plan, interfaces), ['127.0.0.1']);
    assert.equal(replyHost(plan, '127.0.0.1', interfaces), '127.0.0.1');
    assert.equal(answersSender(plan, '127.0.0.1'), true);
    assert.equal(answersSender(plan, '0.0.0.0'), true);
    assert.equal(answersSender(plan, '192.168.1.50'), false);
  }
  // Simulated but listening on a private address of a test namespace: XAddrs name that address.
  const plan = networkPlan({ source: 'sim', listenHost: '10.200.0.1' });
  assert.deepEqual(plan, { kind: 'loopback', host: '10.200.0.1' });
  assert.equal(announceHost(plan, '127.0.0.1'), '10.200.0.1');
});

test('a real device speaks on its listen address, or on every external interface with the address on the sender subnet', () => {
  const one = networkPlan({ listenHost: '192.168.1.20' });
  assert.deepEqual(announceAddresses(one, interfaces), ['192.168.1.20']);
  assert.equal(replyHost(one, '10.9.3.3', interfaces), '192.168.1.20');
  const any = networkPlan({ listenHost: '0.0.0.0' });
  assert.deepEqual(announceAddresses(any, interfaces), ['192.168.1.20', '10.9.0.7']);
  assert.equal(replyHost(any, '10.9.3.3', interfaces), '10.9.0.7');
  assert.equal(replyHost(any, '192.168.1.99', interfaces), '192.168.1.20');
  assert.equal(replyHost(any, '172.16.0.1', interfaces), '192.168.1.20', 'never a wildcard');
  assert.deepEqual(announceAddresses(any, { lo: interfaces.lo }), ['127.0.0.1']);
});

test('a real device answers only probes from the local link (its subnets) or from the machine itself', () => {
  const any = networkPlan({ listenHost: '0.0.0.0' });
  assert.equal(answersSender(any, '192.168.1.99', interfaces), true);
  assert.equal(answersSender(any, '10.9.200.1', interfaces), true);
  assert.equal(answersSender(any, '172.16.0.1', interfaces), false, 'routed from elsewhere, or forged');
  assert.equal(answersSender(any, '8.8.8.8', interfaces), false);
  assert.equal(answersSender(any, '127.0.0.1', interfaces), true);
  assert.equal(answersSender(any, '0.0.0.0', interfaces), true);
  const one = networkPlan({ listenHost: '192.168.1.20' });
  assert.equal(answersSender(one, '192.168.1.7', interfaces), true);
  assert.equal(answersSender(one, '10.9.0.8', interfaces), false, 'on another interface than the one it speaks on');
  assert.equal(answersSender(networkPlan({ listenHost: '192.168.7.7' }), '10.1.1.1', interfaces), true, 'an address no interface lists: nothing to judge by');
  assert.equal(answersSender(networkPlan({ source: 'sim', listenHost: '0.0.0.0' }), '192.168.1.99', interfaces), false);
});

test('replies to a sender without address go to loopback; IPv6 hosts are bracketed', () => {
  assert.equal(replyAddress('0.0.0.0'), '127.0.0.1');
  assert.equal(replyAddress('192.168.1.5'), '192.168.1.5');
  assert.equal(urlHost('fe80::1'), '[fe80::1]');
  assert.equal(urlHost('10.0.0.1'), '10.0.0.1');
});

test('repeated probe ids are answered once within the window, and the memory is bounded', () => {
  const recent = new RecentIds(1000, 3);
  assert.equal(recent.firstTime('a', 0), true);
  assert.equal(recent.firstTime('a', 500), false);
  assert.equal(recent.firstTime('a', 1000), true, 'after the window');
  for (const id of ['b', 'c', 'd', 'e']) recent.firstTime(id, 1001);
  assert.equal(recent.size, 3);
});

test('scopes: the ONVIF list, with each missing category filled in', () => {
  const scopes = discoveryScopes(['onvif://www.onvif.org/Profile/Streaming', 'onvif://www.onvif.org/name/given', 'onvif://www.onvif.org/Profile/Streaming'], {
    name: 'cam 1',
    hardware: 'Lookout-camera',
    location: 'front_door',
  });
  assert.deepEqual(scopes, [
    'onvif://www.onvif.org/Profile/Streaming',
    'onvif://www.onvif.org/name/given',
    'onvif://www.onvif.org/Profile/T',
    'onvif://www.onvif.org/type/video_encoder',
    'onvif://www.onvif.org/hardware/Lookout-camera',
    'onvif://www.onvif.org/location/front_door',
  ]);
  assert.ok(discoveryScopes([], { name: 'cam 1', hardware: 'h', location: 'l' }).includes('onvif://www.onvif.org/name/cam%201'));
});

test('discovery listens on 3702 even under --source sim, unless a port is asked for', () => {
  const runtime = { kind: 'device' as const, id: 'cam-1', dataDir: '/tmp' };
  assert.equal(discoveryPort({ ...runtime, device: { source: 'sim' } }), 3702);
  assert.equal(discoveryPort(runtime), 3702);
  assert.equal(discoveryPort({ ...runtime, device: { source: 'sim', requestedPorts: { ws_discovery: 13702 } } }), 13702);
});
