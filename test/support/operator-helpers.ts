import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../core/src/paths/package-root.js';

/** `lookout` as the operator runs it: a child process, its exit code and output. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export const LOOKOUT = join(packageRoot(), 'bin', 'lookout.js');

/** Environment of an operator with no SSH or bus settings of its own: each test names what it uses. */
export function cleanEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'DEVICE_PASSWORD',
    'LOOKOUT_SSH_KEY_FILE',
    'LOOKOUT_SSH_KEY_PASSPHRASE',
    'LOOKOUT_SSH_KNOWN_HOSTS',
    'LOOKOUT_REGISTRY_FILE',
    'APPLY_RESTART',
    'KEEP_CHUNKS',
    'DRY_RUN',
  ])
    delete env[k];
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export function spawnLookout(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [LOOKOUT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function runLookout(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CliResult> {
  return runProgram(process.execPath, [LOOKOUT, ...args], env, timeoutMs);
}

/** Any program, its exit code and output (for `script`, which gives lookout a terminal). */
export function runProgram(program: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${program} ${args.join(' ')} ran past ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
