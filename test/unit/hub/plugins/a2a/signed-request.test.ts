import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { signA2a, type A2aHeaders, type A2aRequest } from '../../../../../lib/auth/a2a-signature.js';
import { isLookoutError, type LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { admitSignedRequest, BUSY_RETRY_AFTER_S, NONCE_SCOPE, NONCE_TTL_MS } from '../../../../../hub/plugins/a2a/src/signed-request.js';
import { MemorySharedState } from '../../../../../hub/src/state/memory-shared-state.js';

const KEY = 'a2a-unit-test-key-0123456789';
const NOW = 1_800_000_000_000;
const REQUEST: A2aRequest = { method: 'POST', path: '/a2a/query', query: { q: 'peer_hello', target: 'cam-1' }, body: '' };
const lower = (h: A2aHeaders) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

describe('admitting a signed A2A request', () => {
  const admit = (headers: Record<string, string | undefined>, o: { request?: A2aRequest; now?: number; shared?: MemorySharedState; key?: string } = {}) =>
    admitSignedRequest({ key: o.key ?? KEY, shared: o.shared ?? new MemorySharedState(), now: () => o.now ?? NOW }, o.request ?? REQUEST, headers);
  // The 401 status comes with the plugin's declared codes once the hub loads it (a2a-routes.test.ts).
  const refusedWith = (code: string, pattern?: RegExp) => (e: unknown) =>
    isLookoutError(e, `a2a.${code}` as const) && (pattern === undefined || pattern.test(e.message));
  const signed = (over: Partial<A2aRequest> = {}, nonce = 'nonce-0123456789abcdef', at = NOW) => lower(signA2a(KEY, { ...REQUEST, ...over }, at, nonce));

  it('admits a request signed with the key, inside the window, once', async () => {
    const shared = new MemorySharedState({ now: () => NOW });
    assert.deepEqual(await admit(signed(), { shared }), { nonce: 'nonce-0123456789abcdef', timestamp: NOW / 1000, signer: '*' });
    await assert.rejects(admit(signed(), { shared }), refusedWith('signature_replayed', /new nonce/));
  });

  it('without any of the three headers: signature_missing', async () => {
    await assert.rejects(admit({}), refusedWith('signature_missing', /X-Lookout-Timestamp, X-Lookout-Nonce and X-Lookout-Signature/));
  });

  it('a header missing or out of its form: signature_malformed, naming the header', async () => {
    const good = signed();
    const cases: [Record<string, string | undefined>, RegExp][] = [
      [{ ...good, 'x-lookout-timestamp': undefined }, /X-Lookout-Timestamp/],
      [{ ...good, 'x-lookout-timestamp': '2026-11-24T18:00:00Z' }, /X-Lookout-Timestamp/],
      [{ ...good, 'x-lookout-nonce': 'short' }, /X-Lookout-Nonce/],
      [{ ...good, 'x-lookout-nonce': 'has spaces in it, sixteen+' }, /X-Lookout-Nonce/],
      [{ ...good, 'x-lookout-signature': good['x-lookout-signature'].slice(3) }, /X-Lookout-Signature/],
      [{ ...good, 'x-lookout-signature': good['x-lookout-signature'].toUpperCase() }, /X-Lookout-Signature/],
    ];
    for (const [headers, pattern] of cases) await assert.rejects(admit(headers), refusedWith('signature_malformed', pattern), JSON.stringify(headers));
  });

  it('a query with a lone surrogate (no UTF-8 form, so never signed): signature_malformed, a 401, not a 500', async () => {
    const request: A2aRequest = { ...REQUEST, query: { q: 'peer_hello', target: 'cam-\ud800' } };
    await assert.rejects(admit(signed(), { request }), refusedWith('signature_malformed', /parameter "target" is not well-formed Unicode/));
  });

  it('a timestamp more than 300 s away either way: signature_stale; 300 s is still in', async () => {
    await assert.rejects(admit(signed({}, undefined, NOW - 301_000)), refusedWith('signature_stale', /301 s/));
    await assert.rejects(admit(signed({}, undefined, NOW + 301_000)), refusedWith('signature_stale'));
    await admit(signed({}, undefined, NOW - 300_000));
  });

  it('another key, or any part of the request changed after signing: signature_invalid', async () => {
    await assert.rejects(admit(signed(), { key: 'another-key-of-16-or-more' }), refusedWith('signature_invalid'));
    const changed: A2aRequest[] = [
      { ...REQUEST, method: 'PUT' },
      { ...REQUEST, path: '/a2a/query/' },
      { ...REQUEST, query: { q: 'peer_hello', target: 'cam-2' } },
      { ...REQUEST, query: { q: 'peer_hello', target: 'cam-1', extra: '1' } },
      { ...REQUEST, body: '{}' },
    ];
    for (const request of changed) await assert.rejects(admit(signed(), { request }), refusedWith('signature_invalid'), JSON.stringify(request));
  });

  it('claims the nonce only once the HMAC verified: a forged request does not burn a client’s nonce', async () => {
    const shared = new MemorySharedState({ now: () => NOW });
    const forged = { ...signed(), 'x-lookout-signature': `v1=${'0'.repeat(64)}` };
    await assert.rejects(admit(forged, { shared }), refusedWith('signature_invalid'));
    await admit(signed(), { shared });
    assert.deepEqual(await shared.entries(NONCE_SCOPE), new Map(), 'claims are not records');
  });

  it('remembers a nonce for twice the window (a timestamp passes within the window either side)', async () => {
    assert.equal(NONCE_TTL_MS, 600_000);
    let now = NOW;
    const shared = new MemorySharedState({ now: () => now });
    await admit(signed({}, 'nonce-remembered-000001', NOW + 290_000), { shared, now });
    now = NOW + 580_000;
    await assert.rejects(admit(signed({}, 'nonce-remembered-000001', NOW + 290_000), { shared, now }), refusedWith('signature_replayed'));
  });

  it('fails closed when the nonce cache is full: refused as busy (not as replayed: the nonce was never seen), the client signs again later', async () => {
    const shared = new MemorySharedState({ maxClaims: 1, now: () => NOW });
    await admit(signed({}, 'nonce-first-000000000'), { shared });
    await assert.rejects(
      admit(signed({}, 'nonce-second-00000000'), { shared }),
      (e: unknown) =>
        refusedWith('busy', /nonce cache is full/)(e) &&
        isDeepStrictEqual((e as LookoutError).details, { reason: 'nonce_cache_full', retry_after_s: BUSY_RETRY_AFTER_S }),
    );
    await assert.rejects(admit(signed({}, 'nonce-first-000000000'), { shared }), refusedWith('signature_replayed'), 'a nonce seen before is still a replay');
  });
});
