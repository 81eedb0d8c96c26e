import { join, resolve, sep } from 'node:path';
import { definePlugin, LookoutError, reply, toLookoutError, z } from 'lookout/core';
import { BUILDER_JOBS, JobSchema, type Job } from 'lookout/builder-plugins/store';
import { onnxInputShape, shapeText } from 'lookout/builder-plugins/training';
import { TRACK_L } from 'lookout/builder-plugins/track-l';
import { GRAPH_NAMES, type CompileResult } from './service.js';
import { VendorCompile } from './vendor-compile.js';

const config = z.object({
  COMPILE_SERVICE_TOKEN: z.string().min(1).optional().describe("the operator's vendor compile account token (never logged nor answered)"),
  LOOKOUT_BUILDER_COMPILE_URL: z.url().default('https://app.aihub.qualcomm.com').describe('the vendor compile service'),
  LOOKOUT_BUILDER_COMPILE_TIMEOUT_MS: z.coerce.number().int().min(100).default(3_600_000),
  LOOKOUT_BUILDER_MAX_DLC_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(512 * 1024 * 1024),
  LOOKOUT_BUILDER_MODEL_ROOTS: z.string().optional().describe('comma-separated folders an onnx_path may name; default <data dir>'),
});

const Body = z.object({
  model: z.enum(['rf_detr', 'trocr']).default('rf_detr'),
  train_job_id: z.string().min(1).max(128).optional().describe('a TRAINING_COMPLETE job whose export is compiled'),
  onnx_path: z.string().min(1).max(4096).optional().describe('an export on the builder (inside its model roots), instead of a job'),
  input_size: z.number().int().min(32).max(4096).default(544).describe('the compile target side: [1, 3, N, N] (544; 672 for Omni)'),
  encoder_onnx: z.string().min(1).max(4096).optional(),
  decoder_onnx: z.string().min(1).max(4096).optional(),
  artifact_id: z.string().min(1).max(256).optional().describe('any artifact id: a Track L one is refused'),
});
type CompileBody = z.output<typeof Body>;

/** TrOCR's encoder input (spec 02: pixel_values [1, 3, 384, 384]; 320 is wrong). */
const TROCR_ENCODER_SHAPE = [1, 3, 384, 384];

/** Stage 4: the export's shape checked against the target, then the vendor compile to a DLC. */
export default definePlugin({
  name: 'compile',
  version: '1.0.0',
  core: '^1',
  description: 'Builder stage 4: ONNX export shape checked against the compile target, vendor compile to DLC (qnn_dlc, rf_detr_qcs8550); TrOCR as two jobs',
  config,
  requires: [BUILDER_JOBS, TRACK_L],
  errors: [
    { code: 'track_l_refused', status: 409, description: 'a Track L (host-only language model) artifact never goes through the vendor compile' },
    { code: 'export_missing', status: 409, description: 'the job has no local ONNX export to compile (not TRAINING_COMPLETE, or its export is remote)' },
    { code: 'path_outside_root', status: 403, description: "the onnx path is outside the builder's model roots" },
    { code: 'token_missing', status: 503, description: 'COMPILE_SERVICE_TOKEN is not set on the builder' },
    { code: 'service_unreachable', status: 503, description: 'the vendor compile service is not reachable from this builder' },
    { code: 'service_failed', status: 502, description: 'the vendor compile service refused or failed the compile' },
  ],
  routes: [
    {
      method: 'POST',
      path: '/api/pipeline/compile',
      summary: 'Submit the vendor compile (202; poll the job until COMPILE_COMPLETE or FAILED); TrOCR answers two jobs',
      description:
        "The export's input shape is read from the ONNX graph and must equal the target's [1, 3, input_size, input_size] (spec 02: a mismatch is silent accuracy loss): a mismatch is model_shape_mismatch naming both.",
      body: Body,
      statuses: [202],
      errors: [
        'track_l_refused',
        'export_missing',
        'path_outside_root',
        'token_missing',
        'model_shape_mismatch',
        'model_package_invalid',
        'builder-store.job_unknown',
      ],
      response: z.object({ jobs: z.array(JobSchema) }),
    },
  ],
  start(ctx) {
    const c = ctx.config;
    const jobs = ctx.services.get(BUILDER_JOBS);
    const trackL = ctx.services.get(TRACK_L);
    const roots = (c.LOOKOUT_BUILDER_MODEL_ROOTS?.split(',').filter(Boolean) ?? [ctx.runtime.dataDir]).map((r) => resolve(r));
    const running = new Map<string, AbortController>();
    const done = new Set<Promise<void>>();

    // A compile is one synchronous vendor call: a restart leaves nothing to follow, so the job fails with why.
    for (const job of jobs.interrupted().filter((j) => j.kind === 'compile')) {
      jobs.transition(job.id, 'FAILED', { reason: 'the builder stopped while the vendor compile ran; submit the compile again' });
    }

    const insideRoots = (p: string) => {
      const abs = resolve(p);
      if (!roots.some((r) => abs === r || abs.startsWith(r + sep))) {
        throw new LookoutError('compile.path_outside_root', `${p} is outside the builder's model roots`, { details: { path: p } });
      }
      return abs;
    };

    const exportOf = (b: CompileBody): { onnx: string; parent?: Job } => {
      if (b.train_job_id) {
        const parent = jobs.get(b.train_job_id);
        if (!parent) throw new LookoutError('builder-store.job_unknown', `no job ${b.train_job_id}`, { details: { job_id: b.train_job_id } });
        const onnx = parent.result?.onnx_path;
        if (parent.state !== 'TRAINING_COMPLETE' || typeof onnx !== 'string') {
          throw new LookoutError('compile.export_missing', `job ${parent.id} is ${parent.state} and has no local ONNX export to compile`, {
            details: { job_id: parent.id, state: parent.state },
          });
        }
        return { onnx, parent };
      }
      if (b.onnx_path) return { onnx: insideRoots(b.onnx_path) };
      throw new LookoutError('bad_request', 'name the export: train_job_id or onnx_path');
    };

    const checkShape = async (onnx: string, want: number[]) => {
      const { name, shape } = await onnxInputShape(onnx);
      if (shapeText(shape) !== shapeText(want)) {
        throw new LookoutError(
          'model_shape_mismatch',
          `the export's input is ${shapeText(shape)}; the compile target is ${shapeText(want)} (a mismatch loses accuracy silently or fails to load)`,
          {
            details: { export_shape: shape, target_shape: want, onnx },
          },
        );
      }
      return { name, shape };
    };

    const submit = (
      vendor: VendorCompile,
      o: { onnx: string; graphName: string; inputName: string; shape: (number | string)[]; parent?: Job; part?: string },
    ): Job => {
      const job = jobs.create(
        'compile',
        { graph_name: o.graphName, onnx_path: o.onnx, input_shape: o.shape, ...(o.part ? { part: o.part } : {}) },
        {
          executor: 'vendor',
          ...(o.parent ? { parentId: o.parent.id } : {}),
        },
      );
      jobs.transition(job.id, 'COMPILING');
      const options = vendor.options({ graphName: o.graphName, inputName: o.inputName, inputShape: o.shape });
      jobs.log(job.id, 'event', `vendor compile: ${JSON.stringify(options)}`);
      const abort = new AbortController();
      running.set(job.id, abort);
      const p = (async () => {
        try {
          const out = await vendor.compile({
            onnxPath: o.onnx,
            graphName: o.graphName,
            inputName: o.inputName,
            inputShape: o.shape,
            outDir: join(ctx.runtime.dataDir, 'compile', job.id),
            signal: abort.signal,
          });
          const result: CompileResult = { ...out, graph_name: o.graphName, target_runtime: 'qnn_dlc', input_shape: o.shape, onnx_path: o.onnx };
          jobs.transition(job.id, 'COMPILE_COMPLETE', { result: { ...result } });
        } catch (err) {
          if (abort.signal.aborted) return;
          const e = toLookoutError(err);
          const message = vendor.mask(e.message);
          jobs.transition(job.id, 'FAILED', { reason: message, result: { error: { code: e.code, message } } });
        } finally {
          running.delete(job.id);
        }
      })();
      done.add(p);
      void p.finally(() => done.delete(p));
      return job;
    };

    ctx.routes.handle<unknown, CompileBody>('POST', '/api/pipeline/compile', async ({ body }) => {
      for (const id of [body.artifact_id, body.train_job_id].filter((x): x is string => !!x)) {
        if (trackL.isTrackL(id)) {
          throw new LookoutError(
            'compile.track_l_refused',
            `${id} is a Track L artifact: language models run on the host only and never go through the vendor compile`,
            {
              details: { artifact_id: id },
            },
          );
        }
      }
      if (!c.COMPILE_SERVICE_TOKEN)
        throw new LookoutError('compile.token_missing', 'set COMPILE_SERVICE_TOKEN (the operator’s compile account token) in the builder’s environment');
      const vendor = new VendorCompile({
        url: c.LOOKOUT_BUILDER_COMPILE_URL,
        token: c.COMPILE_SERVICE_TOKEN,
        timeoutMs: c.LOOKOUT_BUILDER_COMPILE_TIMEOUT_MS,
        maxDlcBytes: c.LOOKOUT_BUILDER_MAX_DLC_BYTES,
      });
      if (body.model === 'trocr') {
        if (!body.encoder_onnx || !body.decoder_onnx) throw new LookoutError('bad_request', 'a TrOCR compile names encoder_onnx and decoder_onnx');
        const enc = insideRoots(body.encoder_onnx);
        const dec = insideRoots(body.decoder_onnx);
        const encIn = await checkShape(enc, TROCR_ENCODER_SHAPE);
        const decIn = await onnxInputShape(dec);
        // Two jobs, never fused: each part is its own graph and DLC.
        const e = submit(vendor, { onnx: enc, graphName: GRAPH_NAMES.trocr_encoder, inputName: encIn.name, shape: encIn.shape, part: 'encoder' });
        const d = submit(vendor, { onnx: dec, graphName: GRAPH_NAMES.trocr_decoder, inputName: decIn.name, shape: decIn.shape, part: 'decoder' });
        return reply({ status: 202, body: { jobs: [jobs.get(e.id)!, jobs.get(d.id)!] } });
      }
      const { onnx, parent } = exportOf(body);
      const input = await checkShape(onnx, [1, 3, body.input_size, body.input_size]);
      const job = submit(vendor, { onnx, graphName: GRAPH_NAMES.rf_detr, inputName: input.name, shape: input.shape, ...(parent ? { parent } : {}) });
      return reply({ status: 202, body: { jobs: [jobs.get(job.id)!] } });
    });

    ctx.onStop(async () => {
      for (const a of running.values()) a.abort();
      await Promise.all(done);
    });
  },
});
