import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { packageRoot } from '../../core/src/paths/package-root.js';

/** promtool: unpacked by scripts/setup-system.sh into .lookout-dev/promtool, else on PATH. */
export function findPromtool(): string {
  const candidates = [
    join(packageRoot(), '.lookout-dev', 'promtool', 'promtool'),
    ...(process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'promtool')),
  ];
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // next
    }
  }
  throw new Error('promtool not found (run scripts/setup-system.sh: it unpacks it into .lookout-dev/promtool)');
}

/** `promtool check metrics` on an exposition: its exit code and what it said (problems, one a line). */
export function promtoolCheckMetrics(exposition: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(findPromtool(), ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
    child.stdin.end(exposition);
  });
}
