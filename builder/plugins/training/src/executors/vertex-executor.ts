import { setTimeout as sleep } from 'node:timers/promises';
import { LookoutError } from 'lookout/core';
import type { Job } from 'lookout/builder-plugins/store';
import type { TrainExecutor, TrainOutcome, TrainRun } from './train-executor.js';
import { vertexCustomJob, vertexOutputUri, vertexParent, type VertexSettings } from './vertex-request.js';
import { checkCredentials, openJobService, vertexEndpoint, vertexError, type JobServiceClient, type VertexEndpoint } from './vertex-client.js';

export interface VertexExecutorOptions extends Partial<VertexSettings> {
  /** https://{location}-aiplatform.googleapis.com unless set (a test's 127.0.0.1 server). */
  endpoint?: string;
  /** A service account key file instead of Google's default credentials (GOOGLE_APPLICATION_CREDENTIALS). */
  credentialsFile?: string;
  pollMs: number;
  requestTimeoutMs: number;
}

const ENDED = new Set(['JOB_STATE_FAILED', 'JOB_STATE_CANCELLED', 'JOB_STATE_EXPIRED']);

/**
 * Submits the job as a Vertex AI custom job through Google's client library and polls it until it
 * ends. Without credentials the job fails with training.executor_not_configured; where the service
 * cannot be reached (no route out of this machine), with training.service_unreachable naming the
 * endpoint: the job it would have sent is in the job's log.
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
    ]
      .filter(([, v]) => !v)
      .map(([k]) => k);
    if (missing.length) return `the vertex executor needs ${missing.join(', ')}`;
    const e = vertexEndpoint(this.endpointUrl());
    return typeof e === 'string' ? e : undefined;
  }

  private endpointUrl(): string {
    return this.o.endpoint ?? `https://${this.o.location ?? 'us-central1'}-aiplatform.googleapis.com`;
  }

  private settings(): VertexSettings {
    return {
      project: this.o.project!,
      location: this.o.location ?? 'us-central1',
      image: this.o.image!,
      outputUri: this.o.outputUri!,
      timeLimitS: this.o.timeLimitS ?? 86_400,
    };
  }

  /** The library's client with its credentials loaded, for one job's run; closed by the caller. */
  private async open(): Promise<{ client: JobServiceClient; endpoint: VertexEndpoint }> {
    const why = this.notConfigured();
    if (why) throw new LookoutError('training.executor_not_configured', why);
    const endpoint = vertexEndpoint(this.endpointUrl()) as VertexEndpoint;
    const client = openJobService(endpoint, this.o.credentialsFile);
    try {
      await checkCredentials(client, this.o.credentialsFile);
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    return { client, endpoint };
  }

  async run(r: TrainRun): Promise<TrainOutcome> {
    const s = this.settings();
    const customJob = vertexCustomJob(s, {
      jobId: r.job.id,
      recipe: r.recipe.name,
      gpuType: r.gpuType,
      datasetUri: r.datasetUri,
      epochs: r.params.epochs,
      batchSize: r.params.batch_size,
      inputSize: r.params.input_size,
      classes: r.params.classes,
    });
    const parent = vertexParent(s);
    r.log('event', `vertex: createCustomJob ${parent} ${JSON.stringify(customJob)}`);
    const { client, endpoint } = await this.open();
    try {
      const [created] = await this.call(r.signal, endpoint, 'the custom job', () =>
        client.createCustomJob({ parent, customJob }, { timeout: this.o.requestTimeoutMs }),
      );
      if (!created.name) throw new LookoutError('training.service_failed', 'Vertex AI answered no job name');
      r.remember({ vertex_job: created.name });
      r.log('event', `vertex: submitted ${created.name}`);
      return await this.follow(r, client, endpoint, created.name);
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  cannotResume(job: Job): string | undefined {
    const name = job.result?.vertex_job;
    if (typeof name !== 'string') return 'the builder stopped before Vertex AI accepted the job; launch it again';
    const why = this.notConfigured();
    return why ? `${why} to follow ${name} after the restart` : undefined;
  }

  async resume(r: TrainRun): Promise<TrainOutcome> {
    const name = String(r.job.result?.vertex_job);
    r.log('event', `vertex: following ${name} again after a restart`);
    const { client, endpoint } = await this.open();
    try {
      return await this.follow(r, client, endpoint, name);
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  private async follow(r: TrainRun, client: JobServiceClient, endpoint: VertexEndpoint, name: string): Promise<TrainOutcome> {
    const s = this.settings();
    for (let last = ''; ;) {
      const [job] = await this.call(r.signal, endpoint, `the state of ${name}`, () => client.getCustomJob({ name }, { timeout: this.o.requestTimeoutMs }));
      // The REST transport decodes enums to their names; a number would be a newer state than this client knows.
      const state = String(job.state ?? 'JOB_STATE_UNSPECIFIED');
      if (state !== last) r.log('event', `vertex: ${name} ${state}`);
      last = state;
      if (state === 'JOB_STATE_SUCCEEDED') return { export_uri: `${vertexOutputUri(s, r.job.id)}/model/inference_model.onnx`, metrics: {} };
      if (ENDED.has(state)) {
        throw new LookoutError('training.service_failed', `Vertex AI job ${name} ended ${state}${job.error?.message ? `: ${job.error.message}` : ''}`);
      }
      r.progress(state === 'JOB_STATE_RUNNING' ? 0.5 : 0.1, `vertex ${state}`);
      await sleep(this.o.pollMs, undefined, { signal: r.signal }).catch(() => undefined);
      if (r.signal.aborted) throw r.signal.reason as Error;
    }
  }

  /** One library call, given up when the job is cancelled; its failure as the builder's error. */
  private async call<T>(signal: AbortSignal, endpoint: VertexEndpoint, what: string, f: () => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
    aborted.catch(() => undefined);
    try {
      return await Promise.race([f(), aborted]);
    } catch (err) {
      if (signal.aborted) throw signal.reason as Error;
      throw vertexError(err, endpoint, what);
    }
  }
}
