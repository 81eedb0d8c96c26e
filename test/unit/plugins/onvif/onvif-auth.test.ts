import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NonceCache } from '../../../../plugins/onvif/src/auth/nonce-cache.js';
import { parseDigestHeader } from '../../../../lib/auth/http-digest-server.js';
import { parseDateTime } from '../../../../plugins/onvif/src/auth/ws-security.js';
import { parseSoapRequest } from '../../../../plugins/onvif/src/soap/soap-request.js';
import { SoapFault } from '../../../../plugins/onvif/src/soap/soap-fault.js';

test('Created: milliseconds, nanoseconds, no fraction, offsets; garbage is NaN', () => {
  const t = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
  assert.equal(parseDateTime('2024-01-02T03:04:05.678Z'), t);
  assert.equal(parseDateTime('2024-01-02T03:04:05.678901234Z'), t);
  assert.equal(parseDateTime('2024-01-02T03:04:05Z'), t - 678);
  assert.equal(parseDateTime('2024-01-02T05:04:05.678+02:00'), t);
  assert.ok(Number.isNaN(parseDateTime('yesterday')));
});

test('the nonce cache refuses a replay, stays bounded, and refuses what it had to forget', () => {
  const cache = new NonceCache(3, 1000, 0);
  assert.equal(cache.use('a', 100, 100), true);
  assert.equal(cache.use('a', 100, 150), false);
  cache.use('b', 200, 200);
  cache.use('c', 300, 300);
  cache.use('d', 400, 400);
  assert.equal(cache.size, 3);
  // 'a' was forgotten to make room: its Created is now under the floor.
  assert.equal(cache.use('a', 100, 450), false);
  // Expired entries leave on their own.
  assert.equal(cache.use('e', 2000, 2000), true);
  assert.equal(cache.size, 1);
});

test('the same token may come again at once from the peer that first sent it (libonvif), a few times; not from another, not later', () => {
  const cache = new NonceCache(100, 10_000, 50, 2);
  assert.equal(cache.use('t', 100, 100, '10.0.0.1'), true);
  assert.equal(cache.use('t', 100, 101, '10.0.0.2'), false, 'another address is a replay');
  assert.equal(cache.use('t', 100, 102, '10.0.0.1'), true);
  assert.equal(cache.use('t', 100, 103, '10.0.0.1'), true);
  assert.equal(cache.use('t', 100, 104, '10.0.0.1'), false, 'only maxRepeats repeats');
  assert.equal(cache.use('u', 200, 200, '10.0.0.1'), true);
  assert.equal(cache.use('u', 200, 251, '10.0.0.1'), false, 'past the window');
  assert.equal(cache.use('v', 300, 300), true);
  assert.equal(cache.use('v', 300, 301), false, 'an unknown peer never repeats');
});

test('Digest header parsing tolerates node-onvif-ts\'s "Digestusername=" and quoted commas', () => {
  assert.deepEqual(parseDigestHeader('Digestusername="admin", realm="a, b", nonce="00ff", qop=auth, nc=00000001'), {
    username: 'admin',
    realm: 'a, b',
    nonce: '00ff',
    qop: 'auth',
    nc: '00000001',
  });
});

test('SOAP parsing: any prefixes, SOAP faults for what is not a SOAP envelope', () => {
  const r = parseSoapRequest(
    '<a:Envelope xmlns:a="http://www.w3.org/2003/05/soap-envelope"><a:Body><z:GetProfiles xmlns:z="http://www.onvif.org/ver20/media/wsdl"/></a:Body></a:Envelope>',
  );
  assert.equal(r.action, 'GetProfiles');
  assert.equal(r.namespace, 'http://www.onvif.org/ver20/media/wsdl');
  for (const bad of ['', '<x/>', '<a:Envelope xmlns:a="http://www.w3.org/2003/05/soap-envelope"><a:Body/></a:Envelope>', '<<<']) {
    assert.throws(
      () => parseSoapRequest(bad),
      (e: unknown) => e instanceof SoapFault && e.subcode === 'ter:WellFormed',
      bad,
    );
  }
});
