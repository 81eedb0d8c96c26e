import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { tcpConnect } from '../../../../../hub/plugins/readiness/src/tcp-connect.js';

describe('tcpConnect (the ONVIF port probe)', () => {
  it('says a listening port accepts and a closed one refuses, with the address', async () => {
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const open = await tcpConnect('127.0.0.1', port, 2000, new AbortController().signal);
    assert.deepEqual(open, { ok: true, value: { address: `127.0.0.1:${port}` } });
    await new Promise<void>((r) => server.close(() => r()));
    const closed = await tcpConnect('127.0.0.1', port, 2000, new AbortController().signal);
    assert.equal(closed.ok, false);
    assert.ok(!closed.ok && closed.code === 'connect_failed' && /ECONNREFUSED/.test(closed.reason), JSON.stringify(closed));
  });

  it('answers at once when the check was stopped', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const r = await tcpConnect('127.0.0.1', 9, 2000, stopped.signal);
    assert.deepEqual(r.ok ? null : r.code, 'cancelled');
  });
});
