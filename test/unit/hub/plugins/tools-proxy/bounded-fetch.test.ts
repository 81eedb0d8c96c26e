import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { boundedFetch } from '../../../../../hub/plugins/tools-proxy/src/bounded-fetch.js';

test("a device's answer past the byte bound errors instead of growing the hub's memory; a normal one passes", async () => {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/small') return res.end('{"ok":true}');
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < 200 && res.write(chunk)) sent++;
      if (sent < 200) res.once('drain', pump);
      else res.end();
    };
    pump();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const bounded = boundedFetch(1024 * 1024);
    assert.deepEqual(await (await bounded(`${base}/small`)).json(), { ok: true });
    await assert.rejects((await bounded(`${base}/huge`)).arrayBuffer(), /more than 1048576 bytes/);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
