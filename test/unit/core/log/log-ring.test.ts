import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../../../core/src/log/logger.js';
import { LOG_LEVELS, LogRing } from '../../../../core/src/log/log-ring.js';

const quiet = () => new Writable({ write: (_c, _e, cb) => cb() });

test('the log ring keeps the newest lines within its line and byte bounds, filtered by level and component', () => {
  const ring = new LogRing({ maxLines: 50, maxBytes: 64 * 1024 });
  const logger = createLogger({ level: 'debug', destination: quiet(), ring });
  for (let i = 0; i < 120; i++) logger.child({ component: i % 2 ? 'bus' : 'state' }).debug(`line ${i}`);
  logger.child({ plugin: 'registry' }).warn({ password: 'hunter2' }, 'a warning');
  assert.equal(ring.size, 50);
  const all = ring.tail({ lines: 1000, maxBytes: 1024 * 1024 });
  assert.equal(all.dropped, 71);
  assert.match(all.lines.at(-1)!.line, /a warning/);
  assert.ok(!all.lines.some((l) => l.line.includes('hunter2')), 'redacted before the ring');
  const warn = ring.tail({ lines: 10, maxBytes: 1024 * 1024, minLevel: LOG_LEVELS.warn });
  assert.deepEqual(
    warn.lines.map((l) => [l.component, l.level]),
    [['registry', 40]],
  );
  const bus = ring.tail({ lines: 5, maxBytes: 1024 * 1024, component: 'bus' });
  assert.equal(bus.lines.length, 5);
  assert.ok(bus.lines.every((l) => l.component === 'bus'));
  assert.match(bus.lines.at(-1)!.line, /line 119/);
  // The byte bound of an answer keeps the newest whole lines.
  const small = ring.tail({ lines: 100, maxBytes: 300 });
  assert.ok(small.lines.reduce((n, l) => n + Buffer.byteLength(l.line) + 1, 0) <= 300);
  assert.match(small.lines.at(-1)!.line, /a warning/);
});

test('the log ring bounds its bytes: long lines push old ones out and one huge line is cut', () => {
  const ring = new LogRing({ maxLines: 10_000, maxBytes: 40_000 });
  const logger = createLogger({ level: 'info', destination: quiet(), ring });
  for (let i = 0; i < 100; i++) logger.info('x'.repeat(1000));
  logger.info('y'.repeat(100_000));
  const all = ring.tail({ lines: 10_000, maxBytes: 10_000_000 });
  const bytes = all.lines.reduce((n, l) => n + Buffer.byteLength(l.line), 0);
  assert.ok(bytes <= 40_000, `${bytes} bytes held`);
  assert.ok(Buffer.byteLength(all.lines.at(-1)!.line) < 17 * 1024);
});
