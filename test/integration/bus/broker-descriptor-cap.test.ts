/**
 * A hub process whose broker is flooded with idle sockets keeps its HTTP side: the broker's total
 * cap, sized from the process's open-files limit, leaves descriptors for GET /health and state writes.
 * The hub runs under `ulimit -n 512` (Node raises the soft limit to the hard one, so both are set),
 * and 600 sockets from ten loopback addresses (under the per-address cap) would take every descriptor.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { waitFor } from '../../support/hub-helpers.js';

const DESCRIPTORS = 512;
const SOCKETS = 600;
const bin = join(packageRoot(), 'bin', 'lookout-hub.js');
const sockets: Socket[] = [];
let hub: ChildProcess | undefined;
after(() => {
  for (const s of sockets) s.destroy();
  hub?.kill('SIGKILL');
});

it(`answers GET /health while ${SOCKETS} idle sockets hold its broker (open files limited to ${DESCRIPTORS})`, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'lookout-broker-cap-'));
  const child = spawn(
    'bash',
    ['-c', `ulimit -n ${DESCRIPTORS} && exec "$0" "$@"`, process.execPath, bin, '--port', '0', '--broker-port', '0', '--data-dir', dataDir, '--json'],
    {
      env: { ...process.env, LOOKOUT_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  hub = child;
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const ready = await waitFor('the ready line', () => {
    for (const line of out.split('\n')) {
      if (!line.startsWith('{')) continue;
      const parsed = JSON.parse(line) as { event?: string; url: string; broker_port: number };
      if (parsed.event === 'ready') return parsed;
    }
    return undefined;
  });

  let closed = 0;
  for (let i = 0; i < SOCKETS; i++) {
    const socket = connect({ port: ready.broker_port, host: '127.0.0.1', localAddress: `127.0.0.${2 + (i % 10)}` });
    socket.on('error', () => undefined);
    socket.once('close', () => closed++);
    sockets.push(socket);
  }
  await Promise.all(sockets.map((s) => Promise.race([once(s, 'connect'), once(s, 'close')])));
  // The broker refuses what is over its cap (512 less a reserve of 256).
  await waitFor('the broker at its cap', () => SOCKETS - closed <= DESCRIPTORS - 256);

  const health = await fetch(`${ready.url}/health`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { status: string }).status, 'ok');
});
