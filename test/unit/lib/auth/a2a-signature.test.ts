import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { a2aSignerKey, A2A_FLEET_SIGNER, canonicalQuery, signA2a, verifyA2a, type A2aRequest } from '../../../../lib/auth/a2a-signature.js';
import { isLookoutError } from '../../../../core/src/errors/lookout-error.js';

const KEY = 'a2a-signature-test-key-0123456789';
const NOW = 1_800_000_000_000;
const lower = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

describe('the A2A canonical query and a lone surrogate', () => {
  it('refuses to encode a name or value that is not well-formed Unicode: argument_invalid (400), not a URIError', () => {
    for (const query of [{ q: '\ud800' }, { q: ['ok', 'x\udfff'] }, { ['\udc00name']: 'v' }]) {
      assert.throws(
        () => canonicalQuery(query),
        (e) => isLookoutError(e, 'argument_invalid') && e.status === 400 && /not well-formed Unicode/.test(e.message),
        JSON.stringify(query),
      );
    }
    assert.throws(
      () => signA2a(KEY, { method: 'POST', path: '/a2a/query', query: { q: '\ud800' }, body: '' }, NOW),
      (e) => isLookoutError(e, 'argument_invalid'),
    );
  });

  it('encodes a surrogate pair (well-formed) as its UTF-8 bytes, and such a query verifies', () => {
    assert.equal(canonicalQuery({ q: '\u{1F600}' }), 'q=%F0%9F%98%80');
    const request: A2aRequest = { method: 'POST', path: '/a2a/query', query: { q: 'peer_hello', target: 'cam-\u{1F600}' }, body: '' };
    assert.deepEqual(verifyA2a(KEY, request, lower(signA2a(KEY, request, NOW, 'nonce-0123456789abcdef')), NOW), {
      ok: true,
      nonce: 'nonce-0123456789abcdef',
      timestamp: NOW / 1000,
      signer: A2A_FLEET_SIGNER,
    });
  });

  it('a key id signs under the signer’s key derived from the A2A key; the verdict names the signer', () => {
    const request: A2aRequest = { method: 'POST', path: '/a2a/query', query: { q: 'peer_hello', target: 'cam-1' }, body: '' };
    const headers = signA2a(KEY, request, NOW, 'nonce-0123456789abcdef', 'ops-1');
    assert.equal(headers['X-Lookout-Key-Id'], 'ops-1');
    const fleet = signA2a(KEY, request, NOW, 'nonce-0123456789abcdef');
    assert.notEqual(headers['X-Lookout-Signature'], fleet['X-Lookout-Signature'], 'another key');
    assert.deepEqual(verifyA2a(KEY, request, lower(headers), NOW), { ok: true, nonce: 'nonce-0123456789abcdef', timestamp: NOW / 1000, signer: 'ops-1' });
    // A client given only its signer key signs as that signer with a bare HMAC, as with the A2A key.
    const own = signA2a(a2aSignerKey(KEY, 'ops-1'), request, NOW, 'nonce-0123456789abcdef');
    assert.equal(own['X-Lookout-Signature'], headers['X-Lookout-Signature']);
    const asOther = verifyA2a(KEY, request, { ...lower(headers), 'x-lookout-key-id': 'ops-2' }, NOW);
    assert.equal(asOther.ok ? 'ok' : asOther.reason, 'signature_invalid');
  });

  it('verifying a request whose query has a lone surrogate is a signature_malformed verdict, never a throw', () => {
    const headers = lower(signA2a(KEY, { method: 'POST', path: '/a2a/query', query: { q: 'peer_hello' }, body: '' }, NOW, 'nonce-0123456789abcdef'));
    for (const query of [{ q: '\ud800' }, { q: ['peer_hello', '\udbff'] }, { ['\ud800']: 'peer_hello' }]) {
      const verdict = verifyA2a(KEY, { method: 'POST', path: '/a2a/query', query, body: '' }, headers, NOW);
      assert.equal(verdict.ok, false);
      assert.equal(!verdict.ok && verdict.reason, 'signature_malformed', JSON.stringify(query));
      assert.match(!verdict.ok ? verdict.message : '', /cannot have been signed: parameter .* is not well-formed Unicode/);
    }
    // Unsigned, it is refused as unsigned first, as any other unsigned request.
    const unsigned = verifyA2a(KEY, { method: 'POST', path: '/a2a/query', query: { q: '\ud800' }, body: '' }, {}, NOW);
    assert.equal(!unsigned.ok && unsigned.reason, 'signature_missing');
  });
});
