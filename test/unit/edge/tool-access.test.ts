/**
 * The tool server's access rules (edge/src/tool-access.ts) read from the request's headers and peer
 * address alone: on loopback, loopback Hosts and Origins are served and every other one refused (MCP
 * 2025-11-25 transports); beyond loopback the hub's order holds, the credential first (401), then the
 * Origin against the allow list (403).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { toolAccessGuard } from '../../../edge/src/tool-access.js';
import { isLoopbackOrigin } from '../../../lib/net/is-loopback.js';

const TOKEN = 'a-device-tool-token-0123456789';

function req(headers: Record<string, string>, remoteAddress = '127.0.0.1'): IncomingMessage {
  return { headers, socket: { remoteAddress } } as unknown as IncomingMessage;
}

describe('tool access: origins', () => {
  it('names loopback origins exactly', () => {
    for (const o of ['http://localhost:6274', 'http://127.0.0.1', 'https://[::1]:8443', 'http://127.0.0.2:80']) assert.equal(isLoopbackOrigin(o), true, o);
    for (const o of [
      'null',
      'http://localhost.evil.example',
      'http://127.0.0.1.nip.io',
      'file://',
      'ws://localhost',
      'http://10.0.0.1',
      'http://user@localhost',
      'http://localhost/x',
      'http://localhost/',
      'garbage',
    ])
      assert.equal(isLoopbackOrigin(o), false, o);
  });

  it('on loopback: loopback Host and Origin pass; a foreign one of either is 403', () => {
    const guard = toolAccessGuard({ host: '127.0.0.1' });
    assert.equal(guard(req({ host: '127.0.0.1:8765', origin: 'http://127.0.0.1:8765' })), undefined);
    assert.equal(guard(req({ host: 'localhost:8765', origin: 'http://localhost:6274' })), undefined);
    assert.equal(guard(req({ host: '[::1]:8765', origin: 'http://[::1]:3000' })), undefined);
    assert.equal(guard(req({ host: 'evil.example.com', origin: 'http://evil.example.com' }))?.status, 403);
    assert.equal(guard(req({ host: '127.0.0.1:8765', origin: 'http://evil.example.com' }))?.status, 403);
  });

  it('beyond loopback: the token first (401 for a stranger whatever its origin), then the allow list (403)', () => {
    const guard = toolAccessGuard({ host: '10.200.0.1', token: TOKEN, allowedOrigins: ['https://console.example'] });
    const lan = '10.200.0.9';
    assert.equal(guard(req({ host: '10.200.0.1:8765', origin: 'http://evil.example' }, lan))?.status, 401);
    assert.equal(guard(req({ host: '10.200.0.1:8765', origin: 'https://console.example' }, lan))?.status, 401);
    const auth = { authorization: `Bearer ${TOKEN}`, host: '10.200.0.1:8765' };
    assert.equal(guard(req({ ...auth, origin: 'https://console.example' }, lan)), undefined);
    assert.equal(guard(req({ ...auth, origin: 'http://evil.example' }, lan))?.status, 403);
    // A loopback origin is not special beyond loopback: only the allow list counts.
    assert.equal(guard(req({ ...auth, origin: 'http://localhost:6274' }, lan))?.status, 403);
    assert.equal(guard(req(auth, lan)), undefined);
  });
});
