import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeviceNetworks } from '../../../../lib/net/device-networks.js';

test('an address is inside the device networks or not, IPv4 seen through IPv6 included, the same when asked again', () => {
  const networks = DeviceNetworks.parse('10.20.0.0/16,fd00::/8');
  const cases: [string, boolean][] = [
    ['10.20.3.4', true],
    ['::ffff:10.20.3.4', true],
    ['10.21.0.1', false],
    ['fd00::1', true],
    ['fe80::1', false],
    ['not an address', false],
    ['', false],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [address, inside] of cases) assert.equal(networks.contains(address), inside, `${address} (round ${round + 1})`);
  }
});

test('the answers kept are bounded: a stream of new addresses does not grow them past MAX_REMEMBERED', () => {
  const networks = DeviceNetworks.parse('10.0.0.0/8');
  const n = DeviceNetworks.MAX_REMEMBERED + 1000;
  for (let i = 0; i < n; i++) assert.equal(networks.contains(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`), true);
  assert.ok(networks.remembered <= DeviceNetworks.MAX_REMEMBERED, `${networks.remembered} kept`);
  assert.equal(networks.contains('192.168.1.1'), false);
});
