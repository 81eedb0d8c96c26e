import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../core/src/paths/package-root.js';

/** `lookout-hub` as a child process; stopped by its pid, never by name. */
export interface HubProcess {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves when the process exits (whoever caused it). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Whether the soak asked it to stop (an exit without that is a crash). */
  readonly stopRequested: boolean;
  /** pino lines at level error or fatal (50, 60): the first few kept whole, all counted by message. */
  errorLines(): { count: number; first: string[]; byMessage: Map<string, number> };
  /** Lines at level warn (40), by message, counted. */
  warnCounts(): Map<string, number>;
  stderrTail(): string;
  /** SIGTERM, SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startHubProcess(args: string[], env: Record<string, string> = {}, readyTimeoutMs = 20_000): Promise<HubProcess> {
  const bin = join(packageRoot(), 'bin', 'lookout-hub.js');
  const child = spawn(process.execPath, [bin, ...args, '--json'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let tail = '';
  let partial = '';
  let errorCount = 0;
  const firstErrors: string[] = [];
  const errorsByMessage = new Map<string, number>();
  const warns = new Map<string, number>();
  let stopRequested = false;
  child.stderr.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const lines = text.split('\n');
    partial = (lines.pop() ?? '').slice(-100_000);
    for (const line of lines) {
      if (!line) continue;
      tail = (tail + line + '\n').slice(-20_000);
      let level = 0;
      let msg = '';
      try {
        const parsed = JSON.parse(line) as { level?: number; msg?: string; err?: { type?: string; message?: string } };
        level = parsed.level ?? 0;
        msg = parsed.msg ?? '';
        if (parsed.err?.message) msg = `${msg}: ${parsed.err.type ?? 'Error'}: ${parsed.err.message}`.slice(0, 300);
      } catch {
        level = 50; // not pino: a stack trace or a crash message
        msg = line.slice(0, 200);
      }
      if (level >= 50) {
        errorCount++;
        if (firstErrors.length < 10) firstErrors.push(line.slice(0, 2000));
        if (errorsByMessage.size < 100 || errorsByMessage.has(msg)) errorsByMessage.set(msg, (errorsByMessage.get(msg) ?? 0) + 1);
      } else if (level === 40 && (warns.size < 200 || warns.has(msg))) {
        warns.set(msg, (warns.get(msg) ?? 0) + 1);
      }
    }
  });
  child.stdout.on('data', (chunk: Buffer) => {
    if (stdout.length < 100_000) stdout += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );

  const ready = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`lookout-hub printed no ready line within ${readyTimeoutMs} ms:\n${tail}`));
    }, readyTimeoutMs);
    const check = () => {
      const line = stdout.split('\n').find((l) => l.startsWith('{') && l.endsWith('}'));
      if (!line) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      const parsed = JSON.parse(line) as { url: string; pid: number };
      resolve(parsed);
    };
    child.stdout.on('data', check);
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`lookout-hub exited before ready (code ${e.code}, signal ${e.signal}):\n${tail}`));
    });
  });

  return {
    url: ready.url,
    pid: child.pid!,
    child,
    exited,
    get stopRequested() {
      return stopRequested;
    },
    errorLines: () => ({ count: errorCount, first: [...firstErrors], byMessage: new Map(errorsByMessage) }),
    warnCounts: () => new Map(warns),
    stderrTail: () => tail,
    async stop(timeoutMs = 10_000) {
      stopRequested = true;
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
