import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { definePlugin, LookoutError, reply, z } from 'lookout/core';
import { BUILDER_DB, BUILDER_JOBS, type Job } from 'lookout/builder-plugins/store';
import { ONTOLOGY } from 'lookout/builder-plugins/ontology';
import { TRACK_L } from 'lookout/builder-plugins/track-l';
import { PACKAGES, type PackageRecord } from './service.js';
import { PACKAGE_MIGRATIONS, PackageStore } from './package-store.js';
import { writePackageTar } from './package-tar.js';

const Body = z.object({
  compile_job_id: z.string().min(1).max(128).optional().describe('a COMPILE_COMPLETE detector compile: the DLC, backend snpe on the DSP'),
  train_job_id: z.string().min(1).max(128).optional().describe('a TRAINING_COMPLETE job: its ONNX, backend onnx (no compile)'),
  artifact_id: z.string().min(1).max(256).optional().describe('any artifact id: a Track L one is refused'),
  version: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/)
    .optional()
    .describe('the package version; v<n> when absent'),
  ontology: z.string().min(1).max(128).default('default').describe('for an export without a train job: its newest labels'),
});
type PackageBody = z.output<typeof Body>;
const Pkg = z.looseObject({ id: z.string(), version: z.string(), sha256: z.string(), ontology_hash: z.string(), train_job_id: z.string().nullable() });

const FILE_NAME = 'rf_detr_edge4.tar';
const GRAPH = 'rf_detr_qcs8550';

/** Stage 5a: the detector package (rf_detr_edge4.tar) of a compile or a training job, tagged and kept. */
export default definePlugin({
  name: 'package',
  version: '1.0.0',
  core: '^1',
  description: 'Builder stage 5a: rf_detr_edge4.tar (model, config.json, labels.json) tagged with version, ontology hash and train job id; every package kept',
  requires: [BUILDER_DB, BUILDER_JOBS, ONTOLOGY, TRACK_L],
  provides: [PACKAGES],
  errors: [
    { code: 'track_l_refused', status: 409, description: 'a Track L (host-only language model) artifact never becomes a device package' },
    { code: 'source_invalid', status: 409, description: 'the job named is not a finished detector compile or training with a local model' },
    { code: 'version_exists', status: 409, description: 'a package of that version exists (packages are never replaced)' },
    { code: 'package_unknown', status: 404, description: 'no package of that id or version' },
  ],
  routes: [
    {
      method: 'POST',
      path: '/api/packages',
      summary: 'Build rf_detr_edge4.tar from a compile job (DLC) or a training job (ONNX)',
      body: Body,
      statuses: [201],
      errors: ['track_l_refused', 'source_invalid', 'version_exists', 'builder-store.job_unknown', 'ontology.ontology_unknown'],
      response: Pkg,
    },
    { method: 'GET', path: '/api/packages', summary: 'Every package, newest first', response: z.object({ packages: z.array(Pkg) }) },
    {
      method: 'GET',
      path: '/api/packages/:id',
      summary: 'One package by id or version',
      params: { id: 'id or version' },
      errors: ['package_unknown'],
      response: Pkg,
    },
  ],
  start(ctx) {
    const { db, migrate } = ctx.services.get(BUILDER_DB);
    migrate('package', PACKAGE_MIGRATIONS);
    const store = new PackageStore(db);
    const jobs = ctx.services.get(BUILDER_JOBS);
    const ontologies = ctx.services.get(ONTOLOGY);
    const trackL = ctx.services.get(TRACK_L);
    ctx.services.provide(PACKAGES, { get: (id) => store.get(id), list: () => store.list() });

    const job = (id: string, kind: string, state: Job['state']): Job => {
      const j = jobs.get(id);
      if (!j) throw new LookoutError('builder-store.job_unknown', `no job ${id}`, { details: { job_id: id } });
      if (j.kind !== kind || j.state !== state) {
        throw new LookoutError('package.source_invalid', `job ${id} is a ${j.kind} job in ${j.state}; a package needs a ${kind} job in ${state}`, {
          details: { job_id: id, kind: j.kind, state: j.state },
        });
      }
      return j;
    };

    /** The model file, its backend and the train job that made it. */
    const modelOf = (b: PackageBody) => {
      if (b.compile_job_id) {
        const c = job(b.compile_job_id, 'compile', 'COMPILE_COMPLETE');
        if (c.result?.graph_name !== GRAPH) {
          throw new LookoutError('package.source_invalid', `compile ${c.id} is graph ${String(c.result?.graph_name)}; a detector package holds ${GRAPH}`);
        }
        const train = c.parent_id ? jobs.get(c.parent_id) : undefined;
        return {
          file: String(c.result.dlc_path),
          name: `${GRAPH}.dlc`,
          backend: 'snpe' as const,
          runtime: 'dsp',
          shape: c.result.input_shape as PackageRecord['input_shape'],
          train,
          compile: c,
        };
      }
      if (b.train_job_id) {
        const t = job(b.train_job_id, 'train', 'TRAINING_COMPLETE');
        if (typeof t.result?.onnx_path !== 'string')
          throw new LookoutError('package.source_invalid', `training ${t.id} left its export remote (${String(t.result?.export_uri)}); fetch it first`);
        return {
          file: t.result.onnx_path,
          name: `${GRAPH}.onnx`,
          backend: 'onnx' as const,
          runtime: 'cpu',
          shape: t.result.input_shape as PackageRecord['input_shape'],
          train: t,
          compile: undefined,
        };
      }
      throw new LookoutError('bad_request', 'name the model: compile_job_id (DLC) or train_job_id (ONNX)');
    };

    ctx.routes.handle<unknown, PackageBody>('POST', '/api/packages', async ({ body }) => {
      for (const id of [body.artifact_id, body.train_job_id, body.compile_job_id].filter((x): x is string => !!x)) {
        if (trackL.isTrackL(id)) {
          throw new LookoutError(
            'package.track_l_refused',
            `${id} is a Track L artifact: language models run on the host only and are never packaged for, nor deployed to, a device`,
            {
              details: { artifact_id: id },
            },
          );
        }
      }
      const m = modelOf(body);
      const trainParams = m.train?.params as { ontology?: string; labels_version?: string } | undefined;
      const ontology = trainParams?.ontology ?? body.ontology;
      const labels = ontologies.labels(ontology, trainParams?.labels_version);
      if (!labels) throw new LookoutError('ontology.ontology_unknown', `ontology "${ontology}" has no compiled labels`, { details: { ontology } });
      const version = body.version ?? store.nextVersion();
      if (store.get(version))
        throw new LookoutError('package.version_exists', `package ${version} exists; packages are never replaced`, { details: { version } });
      const id = randomUUID();
      const trainJobId = m.train?.id ?? null;
      const path = join(ctx.runtime.dataDir, 'packages', id, FILE_NAME);
      // The tags go in both files: labels.json is what the detector checks, config.json what an operator reads.
      const tags = { version, ontology_hash: labels.ontology_hash, train_job_id: trainJobId ?? `none:${m.compile?.id ?? id}` };
      const config = { model: m.name, backend: m.backend, backend_properties: { runtime: m.runtime, performance_profile: 'high_performance' }, ...tags };
      const labelsJson = { ...labels, labels_version: labels.version, ...tags, input_shape: m.shape };
      const { sha256, bytes } = await writePackageTar(path, [
        { name: 'config.json', data: JSON.stringify(config, null, 2) },
        { name: 'labels.json', data: JSON.stringify(labelsJson, null, 2) },
        { name: m.name, file: m.file },
      ]);
      const record: PackageRecord = {
        id,
        version,
        file_name: FILE_NAME,
        path,
        sha256,
        bytes,
        model_file: m.name,
        backend: m.backend,
        input_shape: m.shape,
        ontology,
        ontology_hash: labels.ontology_hash,
        labels_version: labels.version,
        train_job_id: trainJobId,
        compile_job_id: m.compile?.id ?? null,
        created_at: new Date().toISOString(),
      };
      store.insert(record);
      return reply({ status: 201, body: record });
    });
    ctx.routes.handle('GET', '/api/packages', () => ({ packages: store.list() }));
    ctx.routes.handle('GET', '/api/packages/:id', ({ params }) => {
      const p = store.get(params.id);
      if (!p) throw new LookoutError('package.package_unknown', `no package ${params.id}`, { details: { id: params.id } });
      return p;
    });
  },
});
