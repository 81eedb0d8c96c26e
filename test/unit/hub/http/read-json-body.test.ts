import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, testHub } from '../../../support/hub-helpers.js';

test('a body nested deeper than 64 levels is a 400 before anything walks it (it overflowed JSON.stringify: a 500)', async () => {
  const hub = await testHub();
  try {
    const deep = `{"tool":"get_firmware_status","arguments":{"a":${'['.repeat(30_000)}${']'.repeat(30_000)}}}`;
    const answer = await api(hub.url, '/tools/call?target=cam-1', { method: 'POST', body: deep, headers: { 'content-type': 'application/json' } });
    assert.equal(answer.status, 400, answer.text);
    assert.equal(answer.body.error.code, 'bad_request');
    assert.match(answer.body.error.message, /nested deeper than 64 levels/);
  } finally {
    await hub.close();
  }
});
