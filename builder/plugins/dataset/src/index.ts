import { join } from 'node:path';
import { definePlugin, LookoutError, reply, toLookoutError, z } from 'lookout/core';
import { BUILDER_DB } from 'lookout/builder-plugins/store';
import { ONTOLOGY } from 'lookout/builder-plugins/ontology';
import { DATASETS } from './service.js';
import { DATASET_MIGRATIONS } from './dataset-schema.js';
import { DatasetStore } from './dataset-store.js';
import { importDataset } from './dataset-import.js';
import { storageFor, storageSet } from './storage/storage-for-uri.js';
import { yoloReader } from './formats/yolo-reader.js';
import { yolov8Reader } from './formats/yolov8-reader.js';
import { cocoReader } from './formats/coco-reader.js';
import { DatasetStatusSchema, FramesQuery, FramesSchema, ImportBody, type ImportRequest } from './dataset-schemas.js';

const MiB = 1024 * 1024;
const config = z.object({
  LOOKOUT_BUILDER_DATASET_ROOTS: z.string().optional().describe('comma-separated folders local dataset URIs may name; default <data dir>/imports'),
  LOOKOUT_BUILDER_MAX_DATASET_FILES: z.coerce.number().int().min(1).default(2_000_000),
  LOOKOUT_BUILDER_MAX_IMAGE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(64 * MiB),
  LOOKOUT_BUILDER_MAX_LABEL_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(16 * MiB),
  LOOKOUT_BUILDER_MAX_COCO_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(256 * MiB),
  LOOKOUT_BUILDER_IMPORT_BATCH: z.coerce.number().int().min(1).max(100_000).default(256),
  LOOKOUT_BUILDER_IMPORT_READ_AHEAD: z.coerce.number().int().min(1).max(256).default(16),
  LOOKOUT_BUILDER_MAX_IMPORTS: z.coerce.number().int().min(1).max(64).default(2),
});

const ERRORS = [
  { code: 'dataset_unknown', status: 404, description: 'no dataset of that name' },
  { code: 'dataset_exists', status: 409, description: 'a dataset of that name exists' },
  { code: 'import_running', status: 409, description: 'the dataset is still importing' },
  { code: 'imports_busy', status: 429, description: 'as many imports run as the builder takes; retry when one ends' },
  { code: 'format_invalid', status: 422, description: 'the dataset tree is not of the format named (no names, no data.yaml, JSON not COCO…)' },
  { code: 'uri_unsupported', status: 400, description: 'the dataset URI is not an absolute path, file://, gs:// or s3:// URI' },
  { code: 'path_not_found', status: 404, description: 'the dataset path does not exist on the builder' },
  { code: 'path_outside_root', status: 403, description: "the path is outside the builder's dataset roots" },
  { code: 'file_too_large', status: 413, description: 'a file of the dataset is larger than the builder reads' },
  { code: 'dataset_too_large', status: 413, description: 'the dataset tree has more files than the builder lists' },
  { code: 'storage_unreachable', status: 503, description: 'the cloud storage of the URI (gs://, s3://) is not reachable from this builder' },
];

/** Stage 2: dataset imports (YOLO, COCO, YOLOv8; by URI; RGB + thermal pairs), validation, sequence-aware split. */
export default definePlugin({
  name: 'dataset',
  version: '1.0.0',
  core: '^1',
  description: 'Builder stage 2: dataset import by URI (YOLO, COCO, YOLOv8, thermal pairs), validation report, sequence-aware stratified split',
  config,
  requires: [BUILDER_DB, ONTOLOGY],
  provides: [DATASETS],
  errors: ERRORS,
  routes: [
    {
      method: 'POST',
      path: '/api/datasets',
      summary: 'Import a dataset tree by URI; answers 202 at once, then poll its status',
      description:
        'Reads the tree in the background (progress in the status), validates it (report), maps class names to the ontology and splits it by clip (80/10/10 by default, rare classes in every split). gs:// and s3:// answer dataset.storage_unreachable here.',
      body: ImportBody,
      statuses: [202],
      errors: ['dataset_exists', 'imports_busy', 'uri_unsupported', 'path_not_found', 'path_outside_root', 'storage_unreachable', 'ontology.ontology_unknown'],
      response: DatasetStatusSchema,
    },
    { method: 'GET', path: '/api/datasets', summary: 'Every dataset with its status', response: z.object({ datasets: z.array(DatasetStatusSchema) }) },
    {
      method: 'GET',
      path: '/api/datasets/:name',
      summary: "A dataset's status: import progress, counts per class and split, validation report",
      params: { name: 'the dataset name' },
      errors: ['dataset_unknown'],
      response: DatasetStatusSchema,
    },
    {
      method: 'GET',
      path: '/api/datasets/:name/frames',
      summary: 'Frames of a dataset with their boxes (normalised), by split',
      params: { name: 'the dataset name' },
      query: FramesQuery,
      errors: ['dataset_unknown'],
      response: FramesSchema,
    },
    {
      method: 'DELETE',
      path: '/api/datasets/:name',
      summary: 'Delete a dataset (not while it imports)',
      params: { name: 'the dataset name' },
      statuses: [204],
      errors: ['dataset_unknown', 'import_running'],
    },
  ],
  start(ctx) {
    const { db, migrate } = ctx.services.get(BUILDER_DB);
    const ontologies = ctx.services.get(ONTOLOGY);
    migrate('dataset', DATASET_MIGRATIONS);
    const store = new DatasetStore(db);
    const failed = store.failInterrupted();
    if (failed.length > 0) ctx.log.warn({ datasets: failed }, 'imports cut off by the last stop are marked FAILED');
    ctx.services.provide(DATASETS, store);
    const c = ctx.config;
    const roots = (c.LOOKOUT_BUILDER_DATASET_ROOTS ?? join(ctx.runtime.dataDir, 'imports'))
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean);
    const storages = storageSet(roots);
    const running = new Map<string, { abort: AbortController; done: Promise<void> }>();
    ctx.onStop(async () => {
      for (const r of running.values()) r.abort.abort(new Error('the builder stopped'));
      await Promise.all([...running.values()].map((r) => r.done));
    });

    const run = async (name: string, body: ImportRequest, abort: AbortController) => {
      const storage = storageFor(storages, body.uri);
      const opts = {
        storage,
        uri: body.uri,
        maxFiles: c.LOOKOUT_BUILDER_MAX_DATASET_FILES,
        maxLabelBytes: c.LOOKOUT_BUILDER_MAX_LABEL_BYTES,
        thermal: body.thermal,
      };
      try {
        const reader =
          body.format === 'coco'
            ? await cocoReader({ ...opts, maxJsonBytes: c.LOOKOUT_BUILDER_MAX_COCO_BYTES })
            : body.format === 'yolov8'
              ? await yolov8Reader(opts)
              : await yoloReader({ ...opts, ...(body.class_names ? { classNames: body.class_names } : {}) });
        const report = await importDataset(
          name,
          reader,
          storage,
          body.uri,
          store,
          { maxImageBytes: c.LOOKOUT_BUILDER_MAX_IMAGE_BYTES, batch: c.LOOKOUT_BUILDER_IMPORT_BATCH, readAhead: c.LOOKOUT_BUILDER_IMPORT_READ_AHEAD },
          abort.signal,
        );
        store.finish(name, report);
        ctx.log.info({ dataset: name, frames: report.frames_imported, boxes: report.boxes_imported }, 'dataset imported');
      } catch (err) {
        const e = abort.signal.aborted
          ? new LookoutError('internal', 'the builder stopped during the import; delete the dataset and import it again')
          : toLookoutError(err);
        if (e.code === 'internal' && !abort.signal.aborted) ctx.log.error({ err, dataset: name }, 'dataset import failed');
        store.fail(name, e.code === 'internal' ? e.message : `${e.code}: ${e.message}`);
      }
    };

    ctx.routes.handle<unknown, ImportRequest>('POST', '/api/datasets', async ({ body }) => {
      const ontology = ontologies.config(body.ontology);
      if (!ontology) throw new LookoutError('ontology.ontology_unknown', `no ontology "${body.ontology}"`, { details: { ontology: body.ontology } });
      if (running.size >= c.LOOKOUT_BUILDER_MAX_IMPORTS) {
        throw new LookoutError('dataset.imports_busy', `${running.size} imports are running; at most ${c.LOOKOUT_BUILDER_MAX_IMPORTS}`, {
          details: { running: [...running.keys()] },
        });
      }
      // Checked before answering: a URI that cannot be read (cloud, outside the roots, missing) is the client's to fix now.
      await storageFor(storages, body.uri).isFile(body.uri);
      const { name } = body;
      store.create({
        name,
        uri: body.uri,
        format: body.format,
        ontology: body.ontology,
        options: {
          classes: ontology.classes,
          thermal: body.thermal,
          split: body.split,
          resplit: body.resplit,
          ...(body.class_names ? { class_names: body.class_names } : {}),
        },
      });
      const abort = new AbortController();
      const done = run(name, body, abort).finally(() => running.delete(name));
      running.set(name, { abort, done });
      return reply({ status: 202, body: store.status(name) });
    });
    ctx.routes.handle('GET', '/api/datasets', () => ({ datasets: store.names().map((n) => store.status(n)) }));
    const status = (name: string) => {
      const s = store.status(name);
      if (!s) throw new LookoutError('dataset.dataset_unknown', `no dataset "${name}"`, { details: { dataset: name } });
      return s;
    };
    ctx.routes.handle('GET', '/api/datasets/:name', ({ params }) => status(params.name));
    ctx.routes.handle<z.output<typeof FramesQuery>>('GET', '/api/datasets/:name/frames', ({ params, query }) => {
      status(params.name);
      return { frames: store.frames(params.name, query) };
    });
    ctx.routes.handle('DELETE', '/api/datasets/:name', ({ params }) => {
      status(params.name);
      if (running.has(params.name))
        throw new LookoutError('dataset.import_running', `dataset "${params.name}" is importing; wait for it to end`, { details: { dataset: params.name } });
      store.delete(params.name);
      return undefined;
    });
  },
});
