import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, redactSecrets, REDACTED } from '../../../../core/src/log/logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination: destination }) };
}

test('passwords, keys and tokens never reach the log', () => {
  const { lines, logger } = capture();
  logger.info(
    { password: 'hunter2', token: 'tok-123', device: { DEVICE_PASSWORD: 'pw-dev', hmacKey: 'k-1' }, headers: { authorization: 'Bearer abc' } },
    'connecting',
  );
  logger.child({ plugin: 'x' }).info({ privateKey: 'PRIVATE' }, 'child');
  const text = lines.join('');
  for (const secret of ['hunter2', 'tok-123', 'pw-dev', 'k-1', 'Bearer abc', 'PRIVATE']) assert.ok(!text.includes(secret), `${secret} leaked: ${text}`);
  assert.ok(text.includes(REDACTED));
  assert.ok(text.includes('connecting'));
});

test('redactSecrets cleans answers and exports deeply, PEM keys included, without touching the input', () => {
  const pem = '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----';
  const input = { ok: 1, nested: [{ api_key: 'a', note: `key: ${pem}` }], Password: 'p' };
  const out = redactSecrets(input);
  assert.deepEqual(out, { ok: 1, nested: [{ api_key: REDACTED, note: `key: ${REDACTED}` }], Password: REDACTED });
  assert.equal(input.Password, 'p');
});
