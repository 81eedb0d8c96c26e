import { resolve } from 'node:path';
import { definePlugin, LookoutError, reply, z } from 'lookout/core';
import { BUILDER_JOBS, JobSchema } from 'lookout/builder-plugins/store';
import { ONTOLOGY } from 'lookout/builder-plugins/ontology';
import { TRAINING } from './service.js';
import { LaunchBody, type LaunchRequest } from './training-schemas.js';
import { builtInRecipes } from './recipes.js';
import { LocalExecutor } from './executors/local-executor.js';
import { VertexExecutor } from './executors/vertex-executor.js';
import { VERTEX_MACHINES } from './executors/vertex-request.js';
import type { Recipe, TrainExecutor } from './executors/train-executor.js';
import { TrainingRunner } from './training-runner.js';

const config = z.object({
  LOOKOUT_BUILDER_MAX_TRAINING: z.coerce.number().int().min(1).max(64).default(1).describe('training jobs run at once; the rest wait QUEUED'),
  LOOKOUT_BUILDER_TRAIN_TIME_LIMIT_S: z.coerce.number().int().min(1).default(86_400).describe('a job running longer is stopped and FAILED'),
  LOOKOUT_BUILDER_KILL_GRACE_MS: z.coerce.number().int().min(0).default(5000).describe('SIGTERM to SIGKILL of a cancelled recipe'),
  LOOKOUT_BUILDER_RFDETR_VENV: z.string().default('.lookout-dev/rfdetr-venv').describe('the reference recipe’s Python env (scripts/setup-rfdetr-env.sh)'),
  LOOKOUT_BUILDER_VERTEX_PROJECT: z.string().optional(),
  LOOKOUT_BUILDER_VERTEX_LOCATION: z.string().default('us-central1'),
  LOOKOUT_BUILDER_VERTEX_IMAGE: z.string().optional().describe('the training container image'),
  LOOKOUT_BUILDER_VERTEX_OUTPUT: z
    .string()
    .regex(/^gs:\/\//)
    .optional()
    .describe('gs:// folder the jobs write under'),
  GOOGLE_APPLICATION_CREDENTIALS: z
    .string()
    .optional()
    .describe("Google's service account key file for Vertex AI; unset: Google's default credentials (gcloud, metadata server)"),
  LOOKOUT_BUILDER_VERTEX_ENDPOINT: z.url().optional().describe('default https://{location}-aiplatform.googleapis.com'),
  LOOKOUT_BUILDER_VERTEX_POLL_MS: z.coerce.number().int().min(10).default(30_000),
});

/**
 * Stage 3: training jobs, run by the local executor (a recipe child process) or Vertex AI. At start,
 * the jobs a restart cut off are resumed by their executor (a remote job goes on) or FAILED with why.
 */
export default definePlugin({
  name: 'training',
  version: '1.0.0',
  core: '^1',
  description: 'Builder stage 3: training jobs (local recipe process or Vertex AI custom job), logs, progress, metrics, cancel, time limit',
  config,
  requires: [BUILDER_JOBS, ONTOLOGY],
  provides: [TRAINING],
  errors: [
    { code: 'recipe_unknown', status: 400, description: 'no recipe of that name' },
    { code: 'recipe_env_missing', status: 503, description: "the recipe's environment is missing on this builder (the error names the script that makes it)" },
    { code: 'labels_missing', status: 409, description: 'the ontology has no compiled labels.json yet' },
    { code: 'dataset_not_local', status: 400, description: 'the local executor reads local folders; a gs:// or s3:// dataset needs the vertex executor' },
    { code: 'executor_not_configured', status: 503, description: 'the executor lacks its settings (named)' },
    { code: 'gpu_type_unknown', status: 400, description: 'the gpu_type is not one the executor offers' },
    { code: 'not_cancellable', status: 409, description: 'the job is not a training job that is queued or running' },
    { code: 'service_unreachable', status: 503, description: 'the training service (Vertex AI) is not reachable from this builder' },
    { code: 'service_failed', status: 502, description: 'the training service refused or failed the job' },
    { code: 'recipe_failed', status: 500, description: 'the recipe process failed (its last error line)' },
    { code: 'export_shape_mismatch', status: 500, description: 'the export is not [1, 3, H, W] of the declared input size' },
    { code: 'time_limit', status: 500, description: 'the job ran past its time limit' },
    { code: 'cancelled', status: 409, description: 'the job was cancelled' },
  ],
  routes: [
    {
      method: 'POST',
      path: '/api/pipeline/launch',
      summary: 'Start a training job (202: poll GET /api/pipeline/jobs/:id until TRAINING_COMPLETE or FAILED)',
      body: LaunchBody,
      statuses: [202],
      errors: [
        'recipe_unknown',
        'recipe_env_missing',
        'labels_missing',
        'dataset_not_local',
        'executor_not_configured',
        'gpu_type_unknown',
        'ontology.ontology_unknown',
      ],
      response: JobSchema,
    },
    {
      method: 'POST',
      path: '/api/pipeline/jobs/:id/cancel',
      summary: 'Cancel a queued or running training job: it ends FAILED with reason "cancelled"',
      params: { id: 'the job id' },
      errors: ['not_cancellable', 'builder-store.job_unknown'],
      response: JobSchema,
    },
  ],
  async start(ctx) {
    const c = ctx.config;
    const jobs = ctx.services.get(BUILDER_JOBS);
    const ontologies = ctx.services.get(ONTOLOGY);
    const recipes = builtInRecipes({ rfdetrVenv: resolve(c.LOOKOUT_BUILDER_RFDETR_VENV) });
    const vertex = vertexFromConfig(c);
    const executors: Record<string, TrainExecutor> = { local: new LocalExecutor({ killGraceMs: c.LOOKOUT_BUILDER_KILL_GRACE_MS }), vertex };
    const runner = new TrainingRunner({
      jobs,
      executors,
      recipes,
      dataDir: ctx.runtime.dataDir,
      maxRunning: c.LOOKOUT_BUILDER_MAX_TRAINING,
      timeLimitS: c.LOOKOUT_BUILDER_TRAIN_TIME_LIMIT_S,
      onInternalError: (err, job) => ctx.log.error({ err, job }, 'training job failed'),
    });
    ctx.services.provide(TRAINING, { cancel: (id, by = 'the user') => runner.cancel(id, by) });
    ctx.routes.handle<unknown, LaunchRequest>('POST', '/api/pipeline/launch', ({ body }) => {
      const recipe = recipes[body.recipe];
      if (!recipe)
        throw new LookoutError('training.recipe_unknown', `no recipe "${body.recipe}"; one of ${Object.keys(recipes).join(', ')}`, {
          details: { recipe: body.recipe },
        });
      if (!ontologies.config(body.ontology))
        throw new LookoutError('ontology.ontology_unknown', `no ontology "${body.ontology}"`, { details: { ontology: body.ontology } });
      const labels = ontologies.labels(body.ontology);
      if (!labels)
        throw new LookoutError('training.labels_missing', `ontology "${body.ontology}" has no compiled labels; POST /api/ontology/compile first`, {
          details: { ontology: body.ontology },
        });
      checkExecutor(body, recipe, vertex);
      const job = jobs.create(
        'train',
        {
          ...body,
          input_size: body.input_size ?? recipe.defaultInputSize,
          classes: labels.classes,
          ontology_hash: labels.ontology_hash,
          labels_version: labels.version,
        },
        { executor: body.executor },
      );
      runner.pump();
      return reply({ status: 202, body: jobs.get(job.id)! });
    });
    ctx.routes.handle('POST', '/api/pipeline/jobs/:id/cancel', async ({ params }) => {
      await runner.cancel(params.id, 'the user');
      return jobs.get(params.id)!;
    });

    ctx.onStop(() => runner.stop());
    runner.start();
  },
});

function vertexCheckGpu(gpuType: string): void {
  if (!Object.hasOwn(VERTEX_MACHINES, gpuType)) {
    throw new LookoutError(
      'training.gpu_type_unknown',
      `gpu_type ${gpuType} is not one Vertex AI offers here; one of ${Object.keys(VERTEX_MACHINES).join(', ')}`,
      {
        details: { gpu_type: gpuType },
      },
    );
  }
}

function vertexFromConfig(c: z.output<typeof config>): VertexExecutor {
  return new VertexExecutor({
    ...(c.LOOKOUT_BUILDER_VERTEX_PROJECT ? { project: c.LOOKOUT_BUILDER_VERTEX_PROJECT } : {}),
    location: c.LOOKOUT_BUILDER_VERTEX_LOCATION,
    ...(c.LOOKOUT_BUILDER_VERTEX_IMAGE ? { image: c.LOOKOUT_BUILDER_VERTEX_IMAGE } : {}),
    ...(c.LOOKOUT_BUILDER_VERTEX_OUTPUT ? { outputUri: c.LOOKOUT_BUILDER_VERTEX_OUTPUT } : {}),
    ...(c.GOOGLE_APPLICATION_CREDENTIALS ? { credentialsFile: c.GOOGLE_APPLICATION_CREDENTIALS } : {}),
    ...(c.LOOKOUT_BUILDER_VERTEX_ENDPOINT ? { endpoint: c.LOOKOUT_BUILDER_VERTEX_ENDPOINT } : {}),
    timeLimitS: c.LOOKOUT_BUILDER_TRAIN_TIME_LIMIT_S,
    pollMs: c.LOOKOUT_BUILDER_VERTEX_POLL_MS,
    requestTimeoutMs: 30_000,
  });
}

/** What the executor needs, checked before a job is made: the client's to fix now. */
function checkExecutor(body: LaunchRequest, recipe: Recipe, vertex: VertexExecutor): void {
  if (body.executor === 'local') {
    if (/^(gs|s3):\/\//.test(body.gcs_dataset))
      throw new LookoutError('training.dataset_not_local', `the local executor reads local folders; ${body.gcs_dataset} needs executor "vertex"`);
    const missing = recipe.unavailable?.();
    if (missing) throw new LookoutError('training.recipe_env_missing', missing, { details: { recipe: recipe.name } });
  } else {
    const missing = vertex.notConfigured();
    if (missing) throw new LookoutError('training.executor_not_configured', missing, { details: { executor: 'vertex' } });
    // Refused now, not at submit: an unknown gpu_type is the client's to fix.
    vertexCheckGpu(body.gpu_type);
  }
}
