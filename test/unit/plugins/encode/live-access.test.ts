import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deviceToolToken } from '../../../../lib/auth/tool-token.js';
import { liveAccessGuard, liveToken } from '../../../../plugins/encode/src/live-access.js';

const TOKEN = 'live-token-0123456789abcdef';

/** A real server on 127.0.0.1 answering 200 when the guard lets a request through, else its refusal. */
async function guarded(host: string, token: string | undefined) {
  const guard = liveAccessGuard({ host, token });
  const server = createServer((req, res) => {
    const refusal = guard(req);
    res.writeHead(refusal?.status ?? 200, refusal?.headers ?? {});
    res.end(refusal ? refusal.error.code : 'ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const call = (headers: Record<string, string>) =>
    new Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/live.h265', headers }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
      });
      req.on('error', reject);
      req.end();
    });
  return { call, port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('the token is LOOKOUT_TOOL_TOKEN as given, else derived from the fleet secret as the hub derives it', () => {
  assert.equal(liveToken({ LOOKOUT_TOOL_TOKEN: TOKEN, LOOKOUT_FLEET_SECRET: 'x'.repeat(20) }, 'cam-1'), TOKEN);
  const secret = 'fleet-secret-0123456789';
  assert.equal(liveToken({ LOOKOUT_FLEET_SECRET: secret }, 'cam-1'), deviceToolToken(secret, 'cam-1'));
  assert.equal(liveToken({}, 'cam-1'), undefined);
});

test('a server beyond loopback with a token: loopback callers need none, every other caller presents the token', async () => {
  const s = await guarded('0.0.0.0', TOKEN);
  try {
    assert.equal((await s.call({ host: `127.0.0.1:${s.port}` })).status, 200, 'a local agent');
    assert.equal((await s.call({ host: `localhost:${s.port}` })).status, 200);
    // A caller that names the camera by its network name is a caller beyond loopback.
    const anonymous = await s.call({ host: 'camera.lan:8766' });
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers['www-authenticate'] as string, /^Bearer /);
    assert.equal((await s.call({ host: 'camera.lan:8766', authorization: `Bearer ${TOKEN}` })).status, 200);
    assert.equal(
      (await s.call({ host: 'camera.lan:8766', authorization: `bearer  ${TOKEN} ` })).status,
      200,
      'scheme case and spaces as the tool server takes them',
    );
    assert.equal((await s.call({ host: 'camera.lan:8766', authorization: `Bearer ${TOKEN}x` })).status, 401);
    assert.equal((await s.call({ host: 'camera.lan:8766', authorization: `Basic ${TOKEN}` })).status, 401);
    // A wrong token is refused even from loopback: presenting one means it is checked.
    assert.equal((await s.call({ host: `127.0.0.1:${s.port}`, authorization: 'Bearer wrong-token-0123456789' })).status, 401);
    // A browser page of any site: refused whatever it carries.
    assert.equal((await s.call({ host: `127.0.0.1:${s.port}`, origin: 'https://evil.example' })).status, 403);
  } finally {
    await s.close();
  }
});

test('a loopback-only server answers only to loopback host names (no DNS rebinding), token or not', async () => {
  const s = await guarded('127.0.0.1', undefined);
  try {
    assert.equal((await s.call({ host: `127.0.0.1:${s.port}` })).status, 200);
    assert.equal((await s.call({ host: `[::1]:${s.port}` })).status, 200);
    assert.equal((await s.call({ host: `127.0.0.1.evil.example:${s.port}` })).status, 403);
    assert.equal((await s.call({ host: 'camera.lan', authorization: `Bearer ${TOKEN}` })).status, 403);
  } finally {
    await s.close();
  }
});
