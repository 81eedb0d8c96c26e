import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalA2aString, verifyA2a } from '../../../../../lib/auth/a2a-signature.js';
import { SignBody, signDescribedRequest } from '../../../../../hub/plugins/a2a/src/sign-request.js';
import { MAX_BODY_DEPTH } from '../../../../../hub/plugins/a2a/src/signable-text.js';

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
    assert.deepEqual(verifyA2a(KEY, sent, lower(out.headers), NOW), { ok: true, nonce: out.headers['X-Lookout-Nonce'], timestamp: NOW / 1000, signer: '*' });
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

  it('refuses a lone surrogate anywhere (it has no UTF-8 form to sign), naming the field; a surrogate pair is fine', () => {
    const issueOf = (input: unknown) => {
      const r = SignBody.safeParse(input);
      return r.success ? null : { field: r.error.issues[0].path.join('.'), message: r.error.issues[0].message };
    };
    const base = { method: 'POST', path: '/a2a/query' };
    assert.deepEqual(issueOf({ ...base, query: { q: '\ud800' } }), {
      field: 'query.q',
      message: 'not well-formed Unicode (a lone surrogate): it has no UTF-8 form to sign',
    });
    assert.equal(issueOf({ ...base, query: { q: ['peer_hello', 'x\udc00'] } })?.field, 'query.q.1');
    assert.match(issueOf({ ...base, query: { ['\ud800']: 'v' } })?.message ?? '', /has a key that is not well-formed Unicode/);
    assert.equal(issueOf({ ...base, path: '/a2a/\ud800' })?.field, 'path');
    assert.equal(issueOf({ ...base, body: 'text \udfff' })?.field, 'body');
    assert.equal(issueOf({ ...base, body: { a: [{ b: '\ud800' }] } })?.field, 'body.a.0.b');
    assert.equal(issueOf({ ...base, query: { q: '\u{1F600}' }, body: { '\u{1F600}': '\u{1F600}' } }), null);
  });

  it('refuses a body nested deeper than it can sign, rather than overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const r = SignBody.safeParse({ method: 'POST', path: '/a2a/query', body: deep });
    assert.equal(r.success, false);
    assert.match(r.error.issues[0].message, new RegExp(`nested deeper than ${MAX_BODY_DEPTH} levels`));
    let fine: unknown = 'leaf';
    for (let i = 0; i < 32; i++) fine = { next: fine };
    assert.ok(SignBody.safeParse({ method: 'POST', path: '/a2a/query', body: fine }).success);
  });
});
