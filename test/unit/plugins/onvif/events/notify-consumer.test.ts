import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { consumerPolicy } from '../../../../../plugins/onvif/src/events/notify-delivery.js';
import { SoapFault } from '../../../../../plugins/onvif/src/soap/soap-fault.js';

const iface = (address: string, cidr: string, internal = false): NetworkInterfaceInfo => ({
  address,
  cidr,
  internal,
  family: 'IPv4',
  netmask: '255.255.255.0',
  mac: '02:00:00:00:00:01',
});

test('Notify goes to loopback, the networks of the device interfaces and the configured ones; nowhere else', () => {
  const allowed = consumerPolicy(['10.20.0.0/16'], { lo: [iface('127.0.0.1', '127.0.0.1/8', true)], eth0: [iface('192.168.1.10', '192.168.1.10/24')] });
  for (const ok of ['http://127.0.0.1:8080/n', 'http://127.9.9.9/n', 'http://192.168.1.50/n', 'http://10.20.3.4:9000/x']) assert.equal(allowed(ok).href, ok);
  for (const bad of [
    'http://192.168.2.1/n',
    'http://8.8.8.8/n',
    'http://10.21.0.1/n',
    'http://localhost/n',
    'https://127.0.0.1/n',
    'http://[::1]/n',
    'gopher://127.0.0.1/',
  ]) {
    assert.throws(
      () => allowed(bad),
      (e: unknown) => e instanceof SoapFault && e.status === 400,
      bad,
    );
  }
});
