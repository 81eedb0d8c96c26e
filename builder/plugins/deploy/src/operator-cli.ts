import { spawn } from 'node:child_process';
import { LookoutError } from 'lookout/core';

export interface OperatorCliOptions {
  /** bin/lookout.js */
  cli: string;
  /** The SSH settings the operator reads (registry, key, known hosts, DEVICE_PASSWORD): passed, never logged. */
  env: Record<string, string>;
  timeoutMs: number;
}

/**
 * Runs the operator's own commands (push-models, apply-layer) as a child process: the builder is a
 * host beside the operator, and its deploy goes through exactly what an operator runs by hand.
 * Output lines go to `log`; a non-zero exit throws with the command's last error line.
 */
export async function runOperator(
  o: OperatorCliOptions,
  args: string[],
  log: (stream: 'stdout' | 'stderr', line: string) => void,
  signal: AbortSignal,
): Promise<string> {
  const child = spawn(process.execPath, [o.cli, ...args], { env: { ...process.env, APPLY_RESTART: '0', ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let lastErr = '';
  const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    const text = chunk.toString();
    if (stream === 'stdout' && out.length < 1_000_000) out += text;
    for (const line of text.split('\n').filter((l) => l.trim())) {
      if (stream === 'stderr') lastErr = line.trim();
      log(stream, line);
    }
  };
  child.stdout.on('data', collect('stdout'));
  child.stderr.on('data', collect('stderr'));
  const kill = () => child.kill('SIGTERM');
  const timer = setTimeout(kill, o.timeoutMs);
  signal.addEventListener('abort', kill, { once: true });
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(null));
    child.once('close', (c) => resolve(c));
  });
  clearTimeout(timer);
  signal.removeEventListener('abort', kill);
  if (code !== 0) {
    throw new LookoutError(
      'deploy.operator_failed',
      `lookout ${args[0]} ${args[1] ?? ''} ${code === null ? 'was stopped' : `exited with ${code}`}${lastErr ? `: ${lastErr}` : ''}`.replace(/ +/g, ' '),
    );
  }
  return out;
}
