import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LookoutError } from 'lookout/core';
import { EXPORT_PREFIX, PROGRESS_PREFIX, type RecipeProgress } from '../recipes/recipe-protocol.js';
import type { TrainExecutor, TrainOutcome, TrainRun } from './train-executor.js';

/**
 * Runs a recipe as a child process in its own process group (so that cancel and the time limit end
 * its workers too): stdout and stderr lines go to the job's log, LOOKOUT_PROGRESS lines to its
 * progress and metrics, LOOKOUT_EXPORT names the ONNX it wrote.
 */
export class LocalExecutor implements TrainExecutor {
  readonly name = 'local';

  constructor(private readonly o: { killGraceMs: number }) {}

  async run(r: TrainRun): Promise<TrainOutcome> {
    if (/^(gs|s3):\/\//.test(r.datasetUri)) {
      throw new LookoutError(
        'training.dataset_not_local',
        `the local executor reads datasets on this machine; ${r.datasetUri} is cloud storage (use executor "vertex")`,
      );
    }
    const unavailable = r.recipe.unavailable?.();
    if (unavailable) throw new LookoutError('training.recipe_env_missing', unavailable);
    const paramsFile = join(r.outDir, 'params.json');
    await writeFile(paramsFile, JSON.stringify(r.params, null, 2));
    const [cmd, ...args] = r.recipe.command;
    const child = spawn(cmd, [...args, '--params', paramsFile, '--out', r.outDir], {
      cwd: r.outDir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
    });
    let onnx: string | undefined;
    let lastErr = '';
    const metrics: Record<string, number> = {};
    const lines = (stream: 'stdout' | 'stderr', s: NodeJS.ReadableStream) =>
      new Promise<void>((done) => {
        const rl = createInterface({ input: s, crlfDelay: Infinity });
        rl.on('line', (line) => {
          if (stream === 'stdout' && line.startsWith(PROGRESS_PREFIX)) {
            const p = parseJson<RecipeProgress>(line.slice(PROGRESS_PREFIX.length));
            if (p && p.epochs > 0) {
              Object.assign(metrics, p.metrics ?? {});
              const shown = Object.entries(p.metrics ?? {})
                .map(([k, v]) => `${k} ${Number(v).toPrecision(4)}`)
                .join(', ');
              r.progress(p.epoch / p.epochs, `epoch ${p.epoch}/${p.epochs}${shown ? `: ${shown}` : ''}`, p.metrics);
            }
          } else if (stream === 'stdout' && line.startsWith(EXPORT_PREFIX)) {
            onnx = parseJson<{ onnx?: string }>(line.slice(EXPORT_PREFIX.length))?.onnx;
          } else if (stream === 'stderr' && line.trim()) {
            lastErr = line.trim();
          }
          r.log(stream, line);
        });
        rl.on('close', done);
      });
    const streams = Promise.all([lines('stdout', child.stdout), lines('stderr', child.stderr)]);
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // the group is gone already
      }
    };
    let grace: NodeJS.Timeout | undefined;
    const onAbort = () => {
      killGroup('SIGTERM');
      grace = setTimeout(() => killGroup('SIGKILL'), this.o.killGraceMs);
    };
    r.signal.addEventListener('abort', onAbort, { once: true });
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    await streams;
    r.signal.removeEventListener('abort', onAbort);
    clearTimeout(grace);
    if (r.signal.aborted) throw r.signal.reason instanceof Error ? r.signal.reason : new LookoutError('training.cancelled', String(r.signal.reason));
    if (exit.error) throw new LookoutError('training.recipe_failed', `recipe ${r.recipe.name} could not start: ${exit.error.message}`);
    if (exit.code !== 0) {
      const how = exit.signal ? `was killed by ${exit.signal}` : `exited with ${exit.code}`;
      throw new LookoutError('training.recipe_failed', `recipe ${r.recipe.name} ${how}${lastErr ? `: ${lastErr}` : ''}`);
    }
    if (!onnx) throw new LookoutError('training.recipe_failed', `recipe ${r.recipe.name} ended without a ${EXPORT_PREFIX.trim()} line (no ONNX export)`);
    return { onnx_path: onnx, metrics };
  }

  cannotResume(): string {
    return 'the builder stopped while the local recipe ran, and its process ended with it; launch the job again';
  }

  resume(): Promise<TrainOutcome> {
    return Promise.reject(new LookoutError('training.interrupted', this.cannotResume()));
  }
}

function parseJson<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
