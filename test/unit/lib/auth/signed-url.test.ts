import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signedUrlKey, signUrl, SIGNED_URL_MAX_TTL_S, verifySignedUrl } from '../../../../lib/auth/signed-url.js';
import { deviceToolToken } from '../../../../lib/auth/tool-token.js';

const SECRET = 'unit-test-fleet-secret-0123456789';
const key = signedUrlKey(SECRET);
const NOW = 1_800_000_000;
const PATH = '/media/clips/cam-1/20250101T120000000Z_000001.mp4';

/** The query of a signed path as a parsed query (what Koa gives the hub). */
function queryOf(path: string): Record<string, string> {
  return Object.fromEntries(new URL(path, 'http://h').searchParams);
}

describe('signed URLs', () => {
  it('signs path, exp and every other parameter; GET and HEAD verify, until exp', () => {
    const s = signUrl(key, PATH, NOW, 600, { v: '1' });
    assert.equal(s.exp, NOW + 600);
    assert.match(s.path, /^\/media\/clips\/cam-1\/[^?]+\?exp=\d+&sig=[0-9a-f]{64}&v=1$/);
    for (const method of ['GET', 'HEAD'])
      assert.deepEqual(verifySignedUrl(key, { method, path: PATH, query: queryOf(s.path) }, NOW + 599), { ok: true, exp: NOW + 600 });
    const late = verifySignedUrl(key, { method: 'GET', path: PATH, query: queryOf(s.path) }, NOW + 600);
    assert.equal(late.ok ? 'ok' : late.reason, 'signed_url_expired');
  });

  it('refuses another method, path, parameter, key or a malformed sig as signed_url_invalid', () => {
    const s = signUrl(key, PATH, NOW, 600);
    const q = queryOf(s.path);
    const cases: [string, Parameters<typeof verifySignedUrl>[1], string][] = [
      ['POST', { method: 'POST', path: PATH, query: q }, SECRET],
      ['other path', { method: 'GET', path: PATH.replace('.mp4', '.hevc.mp4'), query: q }, SECRET],
      ['extra parameter', { method: 'GET', path: PATH, query: { ...q, x: '1' } }, SECRET],
      ['exp changed', { method: 'GET', path: PATH, query: { ...q, exp: String(s.exp + 1) } }, SECRET],
      ['sig repeated', { method: 'GET', path: PATH, query: { ...q, sig: [q.sig, q.sig] } }, SECRET],
      ['sig upper case', { method: 'GET', path: PATH, query: { ...q, sig: q.sig.toUpperCase() } }, SECRET],
      ['no exp', { method: 'GET', path: PATH, query: { sig: q.sig } }, SECRET],
      ['another fleet', { method: 'GET', path: PATH, query: q }, 'another-fleet-secret-0123456789'],
    ];
    for (const [what, req, secret] of cases) {
      const v = verifySignedUrl(signedUrlKey(secret), req, NOW);
      assert.equal(v.ok ? 'ok' : v.reason, 'signed_url_invalid', what);
    }
  });

  it('caps the lifetime at 24 h and refuses an exp further away', () => {
    assert.equal(signUrl(key, PATH, NOW, 10 * SIGNED_URL_MAX_TTL_S).exp, NOW + SIGNED_URL_MAX_TTL_S);
    const far = signUrl(key, PATH, NOW + SIGNED_URL_MAX_TTL_S, 600);
    const v = verifySignedUrl(key, { method: 'GET', path: PATH, query: queryOf(far.path) }, NOW);
    assert.equal(v.ok ? 'ok' : v.reason, 'signed_url_invalid');
  });

  it('uses a key of its own: neither the fleet secret nor a device token', () => {
    assert.notEqual(key, SECRET);
    assert.notEqual(key, deviceToolToken(SECRET, 'fleet'));
    assert.equal(signedUrlKey(SECRET), key, 'the same on every replica and after a restart');
  });
});
