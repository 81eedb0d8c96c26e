import { setTimeout as sleep } from 'node:timers/promises';
import { LookoutError } from 'lookout/core';
import type { Job } from 'lookout/builder-plugins/store';
import type { TrainExecutor, TrainOutcome, TrainRun } from './train-executor.js';
import { vertexCustomJob, vertexOutputUri, vertexParent, type VertexSettings } from './vertex-request.js';

export interface VertexExecutorOptions extends Partial<VertexSettings> {
  /** https://{location}-aiplatform.googleapis.com unless set (a test's 127.0.0.1 server). */
  endpoint?: string;
  /** An OAuth access token: sent, never logged nor answered. */
  accessToken?: string;
  pollMs: number;
  requestTimeoutMs: number;
}

/**
 * Submits the job as a Vertex AI custom job and polls it until it ends. Where the service cannot be
 * reached (no route out of this machine), the job fails with training.service_unreachable naming
 * the endpoint: the request it would have sent is in the job's log.
 */
export class VertexExecutor implements TrainExecutor {
  readonly name = 'vertex';

  constructor(private readonly o: VertexExecutorOptions) {}

  /** Why it cannot run (settings missing), or undefined. */
  notConfigured(): string | undefined {
    const missing = [
      ['LOOKOUT_BUILDER_VERTEX_PROJECT', this.o.project],
      ['LOOKOUT_BUILDER_VERTEX_IMAGE', this.o.image],
      ['LOOKOUT_BUILDER_VERTEX_OUTPUT', this.o.outputUri],
      ['LOOKOUT_BUILDER_VERTEX_TOKEN', this.o.accessToken],
    ]
      .filter(([, v]) => !v)
      .map(([k]) => k);
    return missing.length ? `the vertex executor needs ${missing.join(', ')}` : undefined;
  }

  private settings(): VertexSettings & { endpoint: string } {
    const location = this.o.location ?? 'us-central1';
    return {
      project: this.o.project!,
      location,
      image: this.o.image!,
      outputUri: this.o.outputUri!,
      timeLimitS: this.o.timeLimitS ?? 86_400,
      endpoint: (this.o.endpoint ?? `https://${location}-aiplatform.googleapis.com`).replace(/\/+$/, ''),
    };
  }

  async run(r: TrainRun): Promise<TrainOutcome> {
    const why = this.notConfigured();
    if (why) throw new LookoutError('training.executor_not_configured', why);
    const s = this.settings();
    const body = vertexCustomJob(s, {
      jobId: r.job.id,
      recipe: r.recipe.name,
      gpuType: r.gpuType,
      datasetUri: r.datasetUri,
      epochs: r.params.epochs,
      batchSize: r.params.batch_size,
      inputSize: r.params.input_size,
      classes: r.params.classes,
    });
    const url = `${s.endpoint}/v1/${vertexParent(s)}/customJobs`;
    r.log('event', `vertex: POST ${url} ${JSON.stringify(body)}`);
    const created = (await this.call('POST', url, r.signal, body)) as { name?: string };
    if (typeof created.name !== 'string')
      throw new LookoutError('training.service_failed', `Vertex AI answered no job name: ${JSON.stringify(created).slice(0, 300)}`);
    r.remember({ vertex_job: created.name });
    r.log('event', `vertex: submitted ${created.name}`);
    return this.follow(r, created.name);
  }

  cannotResume(job: Job): string | undefined {
    const name = job.result?.vertex_job;
    if (typeof name !== 'string') return 'the builder stopped before Vertex AI accepted the job; launch it again';
    const why = this.notConfigured();
    return why ? `${why} to follow ${name} after the restart` : undefined;
  }

  resume(r: TrainRun): Promise<TrainOutcome> {
    const name = String(r.job.result?.vertex_job);
    r.log('event', `vertex: following ${name} again after a restart`);
    return this.follow(r, name);
  }

  private async follow(r: TrainRun, name: string): Promise<TrainOutcome> {
    const s = this.settings();
    for (let last = ''; ;) {
      const job = (await this.call('GET', `${s.endpoint}/v1/${name}`, r.signal)) as { state?: string; error?: { message?: string } };
      const state = job.state ?? 'JOB_STATE_UNSPECIFIED';
      if (state !== last) r.log('event', `vertex: ${name} ${state}`);
      last = state;
      if (state === 'JOB_STATE_SUCCEEDED') return { export_uri: `${vertexOutputUri(s, r.job.id)}/model/inference_model.onnx`, metrics: {} };
      if (['JOB_STATE_FAILED', 'JOB_STATE_CANCELLED', 'JOB_STATE_EXPIRED'].includes(state)) {
        throw new LookoutError('training.service_failed', `Vertex AI job ${name} ended ${state}${job.error?.message ? `: ${job.error.message}` : ''}`);
      }
      r.progress(state === 'JOB_STATE_RUNNING' ? 0.5 : 0.1, `vertex ${state}`);
      await sleep(this.o.pollMs, undefined, { signal: r.signal }).catch(() => undefined);
      if (r.signal.aborted) throw r.signal.reason as Error;
    }
  }

  private async call(method: string, url: string, signal: AbortSignal, body?: unknown): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.o.accessToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.o.requestTimeoutMs)]),
      });
    } catch (err) {
      if (signal.aborted) throw signal.reason as Error;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new LookoutError(
        'training.service_unreachable',
        `Vertex AI at ${new URL(url).origin} is not reachable from this builder (${cause?.code ?? cause?.message ?? (err as Error).message})`,
        { details: { endpoint: new URL(url).origin } },
      );
    }
    const text = await res.text();
    if (!res.ok)
      throw new LookoutError('training.service_failed', `Vertex AI answered ${res.status} to ${method} ${new URL(url).pathname}: ${text.slice(0, 300)}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new LookoutError('training.service_failed', `Vertex AI answered ${res.status} without JSON`);
    }
  }
}
