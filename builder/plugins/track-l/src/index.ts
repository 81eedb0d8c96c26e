import { definePlugin, LookoutError, reply, z } from 'lookout/core';
import { BUILDER_DB } from 'lookout/builder-plugins/store';
import { TRACK_L, TRACK_L_STAGES } from './service.js';
import { TRACK_L_MIGRATIONS, TrackLStore } from './track-l-store.js';
import { describerOf, endpointProblem } from './describer-endpoint.js';

const Artifact = z.looseObject({ id: z.string(), name: z.string(), stage: z.string().nullable() });
const EnvKey = z.string().regex(/^[A-Z][A-Z0-9_]{0,127}$/);

/** Track L (host only): language-model artifacts through curriculum … promote; never compiled for or deployed to a device. */
export default definePlugin({
  name: 'track-l',
  version: '1.0.0',
  core: '^1',
  description:
    'Track L records (host-only language models): curriculum, dataset factory, train (path B; A after a release audit), package, deploy as host env, evaluate, promote',
  requires: [BUILDER_DB],
  provides: [TRACK_L],
  errors: [
    { code: 'artifact_unknown', status: 404, description: 'no Track L artifact of that id or name' },
    { code: 'artifact_exists', status: 409, description: 'a Track L artifact of that name exists' },
    { code: 'stage_out_of_order', status: 409, description: 'Track L stages are recorded in the spec’s order' },
    { code: 'release_audit_missing', status: 409, description: 'path A (adapter training) needs a recorded release audit first' },
    { code: 'host_env_missing', status: 400, description: 'a Track L deploy is host environment variables (OPENAI_BASE_URL, if given, an http(s) URL)' },
  ],
  routes: [
    {
      method: 'POST',
      path: '/api/track-l/artifacts',
      summary: 'A Track L artifact record (path B unless train_path A)',
      body: z.object({
        name: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/),
        base_model: z.string().min(1).max(256),
        train_path: z.enum(['A', 'B']).default('B'),
      }),
      statuses: [201],
      errors: ['artifact_exists'],
      response: Artifact,
    },
    { method: 'GET', path: '/api/track-l/artifacts', summary: 'Every Track L artifact', response: z.object({ artifacts: z.array(Artifact) }) },
    {
      method: 'GET',
      path: '/api/track-l/artifacts/:id',
      summary: 'One Track L artifact',
      params: { id: 'id or name' },
      errors: ['artifact_unknown'],
      response: Artifact,
    },
    {
      method: 'POST',
      path: '/api/track-l/artifacts/:id/audit',
      summary: 'Record the release audit (path A trains only after it)',
      params: { id: 'id or name' },
      body: z.object({ auditor: z.string().min(1).max(256), summary: z.string().min(1).max(4096) }),
      errors: ['artifact_unknown'],
      response: Artifact,
    },
    {
      method: 'POST',
      path: '/api/track-l/artifacts/:id/stages',
      summary: 'Record the next stage (deploy carries host_env: the host environment variables)',
      params: { id: 'id or name' },
      body: z.object({ stage: z.enum(TRACK_L_STAGES), notes: z.string().max(4096).optional(), host_env: z.record(EnvKey, z.string().max(4096)).optional() }),
      errors: ['artifact_unknown', 'stage_out_of_order', 'release_audit_missing', 'host_env_missing'],
      response: Artifact,
    },
    {
      method: 'GET',
      path: '/api/track-l/promoted',
      summary:
        'The promoted Track L model and its host env; describer: its OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_MODEL of the host env), what the describers use when none is set for them',
      errors: ['artifact_unknown'],
      response: Artifact.extend({ describer: z.object({ url: z.string(), model: z.string(), artifact: z.string() }).nullable() }),
    },
  ],
  start(ctx) {
    const { db, migrate } = ctx.services.get(BUILDER_DB);
    migrate('track-l', TRACK_L_MIGRATIONS);
    const store = new TrackLStore(db);
    ctx.services.provide(TRACK_L, {
      get: (id) => store.get(id),
      isTrackL: (id) => store.get(id) !== undefined,
      promotedDescriber: () => {
        const p = store.promoted();
        return p ? describerOf(p) : null;
      },
    });
    ctx.routes.handle<unknown, { name: string; base_model: string; train_path: 'A' | 'B' }>('POST', '/api/track-l/artifacts', ({ body }) =>
      reply({ status: 201, body: store.create(body) }),
    );
    ctx.routes.handle('GET', '/api/track-l/artifacts', () => ({ artifacts: store.list() }));
    ctx.routes.handle('GET', '/api/track-l/artifacts/:id', ({ params }) => store.require(params.id));
    ctx.routes.handle<unknown, { auditor: string; summary: string }>('POST', '/api/track-l/artifacts/:id/audit', ({ params, body }) =>
      store.audit(params.id, body),
    );
    ctx.routes.handle<unknown, { stage: (typeof TRACK_L_STAGES)[number]; notes?: string; host_env?: Record<string, string> }>(
      'POST',
      '/api/track-l/artifacts/:id/stages',
      ({ params, body }) => {
        const problem = body.host_env ? endpointProblem(body.host_env) : null;
        if (problem) throw new LookoutError('track-l.host_env_missing', `host_env: ${problem}`, { details: { id: params.id } });
        return store.record(params.id, body.stage, body);
      },
    );
    ctx.routes.handle('GET', '/api/track-l/promoted', () => {
      const p = store.promoted();
      if (!p) throw new LookoutError('track-l.artifact_unknown', 'no Track L model is promoted yet');
      return { ...p, describer: describerOf(p) };
    });
  },
});
