import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { deviceInterfaces } from '../../../../../plugins/onvif/src/device/network-interfaces.js';

const v4 = (address: string, mac: string, internal: boolean): NetworkInterfaceInfo => ({
  address,
  mac,
  internal,
  family: 'IPv4',
  netmask: internal ? '255.0.0.0' : '255.255.255.0',
  cidr: null,
});

test('GetNetworkInterfaces lists the real interfaces, never lo; a loopback-only host shows one port with a stable local MAC', () => {
  const host = { lo: [v4('127.0.0.1', '00:00:00:00:00:00', true)], eth0: [v4('192.168.1.10', 'aa:bb:cc:dd:ee:ff', false)] };
  assert.deepEqual(deviceInterfaces('SN1', host), [{ name: 'eth0', mac: 'aa:bb:cc:dd:ee:ff', addresses: [{ address: '192.168.1.10', prefixLength: 24 }] }]);
  const isolated = deviceInterfaces('SN1', { lo: [v4('127.0.0.1', '00:00:00:00:00:00', true)] });
  assert.equal(isolated.length, 1);
  assert.equal(isolated[0].name, 'eth0');
  assert.match(isolated[0].mac, /^02(:[0-9a-f]{2}){5}$/);
  assert.deepEqual(isolated[0].addresses, [{ address: '127.0.0.1', prefixLength: 8 }]);
  assert.equal(deviceInterfaces('SN1', { lo: [v4('127.0.0.1', '00:00:00:00:00:00', true)] })[0].mac, isolated[0].mac, 'stable');
  assert.notEqual(deviceInterfaces('SN2', { lo: [v4('127.0.0.1', '00:00:00:00:00:00', true)] })[0].mac, isolated[0].mac);
});
