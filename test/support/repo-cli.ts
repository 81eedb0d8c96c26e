import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../core/src/paths/package-root.js';

/** Runs one of the project's own CLIs (node_modules/.bin/<name>) in `cwd` (default the repository): its exit code and output, never a throw. */
export function repoCli(name: string, args: string[], cwd = packageRoot()): Promise<{ code: number; output: string }> {
  return new Promise((resolve) =>
    execFile(join(packageRoot(), 'node_modules', '.bin', name), args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0, output: stdout + stderr }),
    ),
  );
}
