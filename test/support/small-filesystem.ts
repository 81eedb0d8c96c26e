import { execFile, execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A real, small filesystem (a tmpfs of a few hundred KiB) that a test fills to the last byte, to see
 * what ENOSPC does to real code: mounting needs root (the tests run as root, here and in CI).
 * Unmounted by the test's `after`, and at process exit should the test die first.
 */
export interface SmallFilesystem {
  readonly dir: string;
  /** Fills every free byte with one filler file (writes until ENOSPC). */
  fill(): void;
  /** Removes the filler: the space is back. */
  free(): void;
  /** Unmounts (lazily when something still holds it) and removes the mount point; idempotent. */
  unmount(): Promise<void>;
}

/** Why a test that mounts cannot run here, or undefined when it can. */
export function cannotMount(): string | undefined {
  return process.getuid?.() === 0 ? undefined : 'mounting a tmpfs needs root';
}

const mounted = new Set<string>();
process.once('exit', () => {
  for (const dir of mounted) {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      rmdirSync(dir);
    } catch {
      // best effort at exit
    }
  }
});

export async function mountSmallFilesystem(options: { sizeKiB?: number; inodes?: number; prefix?: string } = {}): Promise<SmallFilesystem> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix ?? 'lookout-smallfs-'));
  const opts = [`size=${options.sizeKiB ?? 256}k`, ...(options.inodes ? [`nr_inodes=${options.inodes}`] : []), 'mode=0755'];
  try {
    await run('mount', ['-t', 'tmpfs', '-o', opts.join(','), 'tmpfs', dir]);
  } catch (err) {
    rmdirSync(dir);
    throw err;
  }
  mounted.add(dir);
  const filler = join(dir, '.filler');
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(4096);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    async unmount() {
      if (!mounted.has(dir)) return;
      try {
        await run('umount', [dir]);
      } catch {
        await run('umount', ['-l', dir]);
      }
      mounted.delete(dir);
      rmdirSync(dir);
    },
  };
}
