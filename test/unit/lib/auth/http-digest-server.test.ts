import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DigestServer, parseDigestHeader, type DigestServerOptions } from '../../../../lib/auth/http-digest-server.js';

const md5 = (s: string): string => createHash('md5').update(s).digest('hex');

function setup(over: Partial<DigestServerOptions> = {}) {
  const clock = { ms: 1_700_000_000_000 };
  const server = new DigestServer({
    realm: 'R',
    user: 'u',
    password: 'p',
    lifetimeMs: 60_000,
    maxNonces: 2,
    offerQop: true,
    allowNoQop: false,
    now: () => clock.ms,
    ...over,
  });
  const nonce = (binding = ''): string => parseDigestHeader(server.challenge(false, binding)).nonce;
  const answer = (n: string, o: { nc?: number; uri?: string; password?: string } = {}): string => {
    const uri = o.uri ?? '/x';
    const ha1 = md5(`u:R:${o.password ?? 'p'}`);
    const ha2 = md5(`POST:${uri}`);
    if (o.nc === undefined) return `Digest username="u", realm="R", nonce="${n}", uri="${uri}", response="${md5(`${ha1}:${n}:${ha2}`)}"`;
    const nc = o.nc.toString(16).padStart(8, '0');
    return `Digest username="u", realm="R", nonce="${n}", uri="${uri}", qop=auth, nc=${nc}, cnonce="c", response="${md5(`${ha1}:${n}:${nc}:c:auth:${ha2}`)}"`;
  };
  return { clock, server, nonce, answer };
}

test('DigestServer: uri, nc, password, lifetime; the RFC 2069 form only where allowed', () => {
  const { clock, server, nonce, answer } = setup();
  assert.match(server.challenge(), /^Digest realm="R", qop="auth", nonce="[0-9a-f]{44}", algorithm=MD5$/);
  const n = nonce();
  const req = { method: 'POST', uri: '/x' };
  assert.equal(server.verify(undefined, req), 'absent');
  assert.equal(server.verify('Basic dTpw', req), 'absent');
  assert.equal(server.verify(answer(n, { nc: 1 }), req), 'ok');
  assert.equal(server.verify(answer(n, { nc: 1 }), req), 'refused', 'the same nc again');
  assert.equal(server.verify(answer(n, { nc: 2, uri: '/y' }), req), 'refused', 'digested for another uri');
  assert.equal(server.verify(answer(n, { nc: 2, password: 'q' }), req), 'refused');
  assert.equal(server.verify(answer(n), req), 'refused', 'no qop is not allowed here');
  assert.equal(server.verify(answer(n, { nc: 2 }), req), 'ok');
  clock.ms += 61_000;
  assert.equal(server.verify(answer(n, { nc: 3 }), req), 'stale');
});

test('DigestServer: a nonce bound to one connection is refused on another; the RFC 2069 form passes where allowed', () => {
  const { server, nonce, answer } = setup({ allowNoQop: true, offerQop: false });
  assert.doesNotMatch(server.challenge(), /qop/);
  const n = nonce('conn-a');
  assert.equal(server.verify(answer(n), { method: 'POST', uri: '/x', binding: 'conn-a' }), 'ok');
  assert.equal(server.verify(answer(n), { method: 'POST', uri: '/x', binding: 'conn-b' }), 'refused');
  assert.equal(server.verify(answer(n), { method: 'POST', uri: '/x' }), 'refused');
});

test('DigestServer: a connection object stands for a binding of its own (RTSP); two connections never share one', () => {
  const { server, answer } = setup({ allowNoQop: true, offerQop: false });
  const [a, b] = [{}, {}];
  const n = parseDigestHeader(server.challenge(false, a)).nonce;
  assert.equal(server.verify(answer(n), { method: 'POST', uri: '/x', binding: a }), 'ok');
  assert.equal(server.verify(answer(n), { method: 'POST', uri: '/x', binding: b }), 'refused');
  assert.equal(server.verify(answer(n), { method: 'POST', uri: '/x', binding: '[object Object]' }), 'refused');
});

test('DigestServer: when the count table is full, a nonce whose count was forgotten is stale, never replayable', () => {
  const { clock, server, nonce, answer } = setup({ maxNonces: 2 });
  const req = { method: 'POST', uri: '/x' };
  const first = nonce();
  assert.equal(server.verify(answer(first, { nc: 1 }), req), 'ok');
  clock.ms += 1;
  const second = nonce();
  clock.ms += 1;
  const third = nonce();
  assert.equal(server.verify(answer(second, { nc: 1 }), req), 'ok');
  assert.equal(server.verify(answer(third, { nc: 1 }), req), 'ok'); // the first one's count is forgotten
  assert.equal(server.verify(answer(first, { nc: 1 }), req), 'stale', 'a replay of the forgotten one is not accepted');
  assert.equal(server.verify(answer(third, { nc: 2 }), req), 'ok');
});
