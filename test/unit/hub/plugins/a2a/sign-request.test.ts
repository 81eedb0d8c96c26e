import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalA2aString, verifyA2a } from '../../../../../core/src/auth/a2a-signature.js';
import { SignBody, signDescribedRequest } from '../../../../../hub/plugins/a2a/src/sign-request.js';

const KEY = 'a2a-unit-test-key-0123456789';
const NOW = 1_800_000_000_000;
const lower = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

describe('POST /a2a/sign: signing a described request', () => {
  it('gives headers that verify for the request as sent, with the canonical string, query and body that were signed', () => {
    const out = signDescribedRequest(KEY, { method: 'post', path: '/a2a/query', query: { target: 'cam 1', q: 'peer_hello' } }, NOW);
    assert.equal(out.query_string, 'q=peer_hello&target=cam%201');
    assert.equal(out.body, '');
    assert.equal(out.headers['X-Lookout-Timestamp'], String(NOW / 1000));
    assert.match(out.headers['X-Lookout-Nonce'], /^[A-Za-z0-9_-]{16,64}$/);
    assert.match(out.headers['X-Lookout-Signature'], /^v1=[0-9a-f]{64}$/);
    const sent = { method: 'POST', path: '/a2a/query', query: Object.fromEntries(new URLSearchParams(out.query_string)), body: Buffer.from(out.body) };
    assert.equal(out.canonical, canonicalA2aString(sent, out.headers['X-Lookout-Timestamp'], out.headers['X-Lookout-Nonce']));
    assert.deepEqual(verifyA2a(KEY, sent, lower(out.headers), NOW), { ok: true, nonce: out.headers['X-Lookout-Nonce'], timestamp: NOW / 1000 });
    assert.equal(out.expires_at, new Date(NOW + 300_000).toISOString());
  });

  it('signs a JSON body as JSON.stringify of it, and a string body as its UTF-8 bytes', () => {
    const json = signDescribedRequest(KEY, { method: 'POST', path: '/a2a/query', body: { hello: 'wörld', n: [1, 2] } }, NOW);
    assert.equal(json.body, '{"hello":"wörld","n":[1,2]}');
    const sent = { method: 'POST', path: '/a2a/query', query: {}, body: Buffer.from(json.body, 'utf8') };
    assert.ok(verifyA2a(KEY, sent, lower(json.headers), NOW).ok);
    const text = signDescribedRequest(KEY, { method: 'POST', path: '/a2a/query', body: '  raw text ' }, NOW);
    assert.equal(text.body, '  raw text ');
    assert.ok(verifyA2a(KEY, { ...sent, body: Buffer.from('  raw text ') }, lower(text.headers), NOW).ok);
  });

  it('a fresh nonce for every signature', () => {
    const a = signDescribedRequest(KEY, { method: 'POST', path: '/a2a/query' }, NOW);
    const b = signDescribedRequest(KEY, { method: 'POST', path: '/a2a/query' }, NOW);
    assert.notEqual(a.headers['X-Lookout-Nonce'], b.headers['X-Lookout-Nonce']);
  });

  it('refuses a description that cannot be a request: a query in the path, a bad method, unknown fields', () => {
    const fieldOf = (input: unknown) => {
      const r = SignBody.safeParse(input);
      return r.success ? null : r.error.issues[0].path.join('.');
    };
    assert.equal(fieldOf({ method: 'POST', path: '/a2a/query?q=peer_hello' }), 'path');
    assert.equal(fieldOf({ method: 'POST', path: 'a2a/query' }), 'path');
    assert.equal(fieldOf({ method: 'PO ST', path: '/a2a/query' }), 'method');
    assert.equal(fieldOf({ method: 'POST', path: '/a2a/query', query: { q: 5 } }), 'query.q');
    assert.equal(fieldOf({ method: 'POST', path: '/a2a/query', key: 'x' }), '');
    assert.equal(fieldOf({ method: 'POST', path: '/a2a/query', query: { q: ['a', 'b'] }, body: null }), null);
  });
});
