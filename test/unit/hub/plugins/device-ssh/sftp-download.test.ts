/**
 * sftpDownload when the transfer completes after the download was stopped (abort or timeout): the
 * caller has heard of the failure, so the part file is removed instead of renamed into place. A
 * fake ssh2 client whose fastGet finishes only after the abort stands for a transfer the stop could
 * not interrupt (the window between the transfer's end and the rename).
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Client } from 'ssh2';
import { LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { sftpDownload } from '../../../../../hub/plugins/device-ssh/src/sftp-ops.js';

const NAME = '20260106T000000000Z_000001.h265';

/** A client whose one SFTP session serves a 5-byte file, fastGet finishing `lateMs` after `signal` aborts. */
function fakeClient(signal: AbortSignal, lateMs: number, finished: () => void): Client {
  const sftp = Object.assign(new EventEmitter(), {
    lstat: (_path: string, cb: (err: undefined, attrs: { isFile(): boolean; size: number }) => void) =>
      setImmediate(() => cb(undefined, { isFile: () => true, size: 5 })),
    fastGet: (_remote: string, local: string, _opts: unknown, cb: (err?: Error) => void) => {
      writeFileSync(local, 'hello');
      const done = () =>
        setTimeout(() => {
          cb();
          finished();
        }, lateMs);
      if (signal.aborted) done();
      else signal.addEventListener('abort', done, { once: true });
    },
    end: () => undefined,
  });
  return { sftp: (cb: (err: undefined, s: unknown) => void) => setImmediate(() => cb(undefined, sftp)) } as unknown as Client;
}

describe('sftpDownload after a stop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sftp-download-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [when, lateMs] of [
    ['while the stop settles', 20],
    ['after the caller heard of the stop', 2600],
  ] as const) {
    it(`a transfer that completes ${when} leaves no file`, async () => {
      const sub = mkdtempSync(join(dir, 'case-'));
      const controller = new AbortController();
      let transferEnded = false;
      const client = fakeClient(controller.signal, lateMs, () => (transferEnded = true));
      setTimeout(() => controller.abort(), 50);
      await assert.rejects(
        sftpDownload(client, `/data/recordings/${NAME}`, NAME, join(sub, NAME), 1000, { where: 'cam-1', idleTimeoutMs: 10_000, signal: controller.signal }),
        (err: unknown) => err instanceof LookoutError && err.code === 'ssh_failed' && (err.details as { reason?: string }).reason === 'cancelled',
      );
      while (!transferEnded) await new Promise((r) => setTimeout(r, 20));
      // What the download does after the transfer (stat, rename or removal) has had its time.
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(readdirSync(sub), [], 'no file, no part file');
    });
  }
});
