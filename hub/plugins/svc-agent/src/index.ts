import { z } from 'zod';
import { HUB_STATE, type StateKeeper } from 'lookout/hub';
import { BODY_ROUTE_ERRORS, DEVICE_CALL_ERRORS, LookoutError, definePlugin } from 'lookout/core';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { DEVICE_TOOLS } from '../../tools-proxy/src/service.js';
import { AgentMemory, FLEET_SCOPE, MemorySnapshotSchema, NoteSchema } from './agent-memory.js';
import { planByDescriber } from './describer.js';
import { executePlan } from './execute-plan.js';
import { ExecuteBodySchema, ExecuteResponseSchema, MAX_PLAN_STEPS, ResolveBodySchema, ResolveResponseSchema } from './plan.js';
import { callerMayMutate } from './policy.js';
import { resolveByRules } from './rules.js';
import { PromotedDescriber } from './promoted-describer.js';

const MEMORY_STATE_KEY = 'svc-agent-memory';
const APPROVAL_HEADER = 'x-svc-agent-approval';

const Agent = z
  .string()
  .regex(/^[A-Za-z0-9_.:@-]+$/)
  .min(1)
  .max(128)
  .describe('the agent whose notes these are');
const Scope = z.string().min(1).max(256).optional().describe('a device id; left out: the fleet-wide notes');
const MemoryQuery = z.object({ agent: Agent, device: Scope });
const MemoryDeleteQuery = MemoryQuery.extend({ id: z.string().min(1).max(64).optional().describe('one note; left out: every note of the scope') });
const MemoryPutBody = z.object({ agent: Agent, device: Scope, note: z.string().trim().min(1).max(4000) });
const MemoryResponse = z.object({
  agent: z.string(),
  scope: z.string().describe('fleet, or device:<id>'),
  notes: z.array(NoteSchema),
  limit: z.number().int(),
});

/**
 * The agent routes (spec 01: /svc-agent/resolve, /execute, /memory; first path segment neutral):
 * a request becomes a plan of device tool calls, a plan runs under a policy (read-only tools run,
 * mutating ones only approved and with the approval token, each audited in the debug ring), and
 * an agent keeps bounded notes per device and for the fleet in the hub state.
 */
export default definePlugin({
  name: 'svc-agent',
  version: '1.0.0',
  core: '^1',
  description: 'Agent routes: resolve a request into a plan of device tool calls, execute it under a policy, and keep agent notes',
  requires: [DEVICE_REGISTRY, DEVICE_TOOLS, DEBUG_RING],
  optionalRequires: [HUB_STATE],
  config: z.object({
    /** A caller sending this in x-svc-agent-approval may run the mutating steps of an approved plan; unset: none may. */
    LOOKOUT_SVC_AGENT_APPROVAL_TOKEN: z.string().min(16).optional(),
    /** OpenAI-compatible API base that resolves natural-language requests; unset: the rules do. */
    LOOKOUT_SVC_AGENT_DESCRIBER_URL: z.url().optional(),
    LOOKOUT_SVC_AGENT_DESCRIBER_MODEL: z.string().min(1).default('default'),
    LOOKOUT_SVC_AGENT_DESCRIBER_API_KEY: z.string().min(1).optional(),
    LOOKOUT_SVC_AGENT_DESCRIBER_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(10_000),
    /** The builder whose promoted Track L model resolves text when LOOKOUT_SVC_AGENT_DESCRIBER_URL is unset (the key builder-proxy reads too). */
    LOOKOUT_BUILDER_URL: z
      .union([z.literal(''), z.url({ protocol: /^https?$/ })])
      .optional()
      .describe('the model builder (lookout-builder), e.g. http://127.0.0.1:8790'),
    LOOKOUT_BUILDER_TOKEN: z.string().min(8).optional().describe("the builder's own bearer token"),
    LOOKOUT_SVC_AGENT_PROMOTED_TTL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(3_600_000)
      .default(30_000)
      .describe('how long the builder’s answer about its promoted Track L model is kept before it is asked again'),
    LOOKOUT_SVC_AGENT_MEMORY_NOTES: z.coerce.number().int().min(1).max(10_000).default(100),
    LOOKOUT_SVC_AGENT_MEMORY_SCOPES: z.coerce.number().int().min(1).max(100_000).default(10_000),
  }),
  errors: [
    { code: 'request_unresolved', status: 422, description: 'the request names no tool or no registered device the rules know' },
    {
      code: 'plan_refused',
      status: 403,
      description: 'a step of the plan may not run under the policy (a mutating tool, unapproved or without the approval token); nothing ran',
    },
    { code: 'memory_full', status: 409, description: 'the agent notes are at their bound; delete some first' },
  ],
  routes: [
    {
      method: 'POST',
      path: '/svc-agent/resolve',
      summary: 'Turn a request (structured, or text through the describer or the rules) into a plan of tool calls on named devices',
      body: ResolveBodySchema,
      response: ResolveResponseSchema,
      errors: ['request_unresolved', 'target_unknown', ...BODY_ROUTE_ERRORS],
    },
    {
      method: 'POST',
      path: '/svc-agent/execute',
      summary: 'Run a plan under the policy (read-only tools; mutating ones approved and with the approval token), or answer what would run (dry_run)',
      body: ExecuteBodySchema,
      response: ExecuteResponseSchema,
      errors: ['plan_refused', ...DEVICE_CALL_ERRORS, ...BODY_ROUTE_ERRORS],
    },
    { method: 'GET', path: '/svc-agent/memory', summary: "An agent's notes for a device or the fleet", query: MemoryQuery, response: MemoryResponse },
    {
      method: 'PUT',
      path: '/svc-agent/memory',
      summary: "Add a note to an agent's notes for a device or the fleet",
      body: MemoryPutBody,
      response: MemoryResponse,
      errors: ['memory_full', ...BODY_ROUTE_ERRORS],
    },
    {
      method: 'DELETE',
      path: '/svc-agent/memory',
      summary: "Delete one note (id) or every note of an agent's scope",
      query: MemoryDeleteQuery,
      response: MemoryResponse.extend({ removed: z.number().int() }),
    },
  ],
  async start(ctx) {
    const c = ctx.config;
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const tools = ctx.services.get(DEVICE_TOOLS);
    const ring = ctx.services.get(DEBUG_RING);
    let saved: StateKeeper | undefined;
    const memory = new AgentMemory({ notesPerScope: c.LOOKOUT_SVC_AGENT_MEMORY_NOTES, scopes: c.LOOKOUT_SVC_AGENT_MEMORY_SCOPES }, () => saved?.changed());
    const store = ctx.services.optional(HUB_STATE);
    if (store) {
      const loaded = await store.load(MEMORY_STATE_KEY, (raw) => MemorySnapshotSchema.parse(raw));
      if (loaded.value) memory.restore(loaded.value);
      if (loaded.warning) ctx.log.warn(loaded.warning);
      const keeper = (saved = store.keep(MEMORY_STATE_KEY, () => memory.snapshot()));
      ctx.onStop(() => keeper.flush());
    }
    const apiKey = c.LOOKOUT_SVC_AGENT_DESCRIBER_API_KEY ? { apiKey: c.LOOKOUT_SVC_AGENT_DESCRIBER_API_KEY } : {};
    const configured = c.LOOKOUT_SVC_AGENT_DESCRIBER_URL
      ? { url: c.LOOKOUT_SVC_AGENT_DESCRIBER_URL, model: c.LOOKOUT_SVC_AGENT_DESCRIBER_MODEL, timeoutMs: c.LOOKOUT_SVC_AGENT_DESCRIBER_TIMEOUT_MS, ...apiKey }
      : undefined;
    const promoted = new PromotedDescriber({
      ...(c.LOOKOUT_BUILDER_URL ? { builderUrl: c.LOOKOUT_BUILDER_URL } : {}),
      ...(c.LOOKOUT_BUILDER_TOKEN ? { builderToken: c.LOOKOUT_BUILDER_TOKEN } : {}),
      ttlMs: c.LOOKOUT_SVC_AGENT_PROMOTED_TTL_MS,
      timeoutMs: c.LOOKOUT_SVC_AGENT_DESCRIBER_TIMEOUT_MS,
      now: () => ctx.clock.now(),
    });
    /** The describer set for the agent routes, else the builder's promoted Track L model, else none (the rules). */
    const describerNow = async () => {
      if (configured) return { options: configured, used: { model: configured.model, source: 'env' as const, artifact: null }, why: null };
      const p = await promoted.current();
      if (!p.value) return { options: undefined, used: undefined, why: p.why };
      return {
        options: { url: p.value.url, model: p.value.model, timeoutMs: c.LOOKOUT_SVC_AGENT_DESCRIBER_TIMEOUT_MS, ...apiKey },
        used: { model: p.value.model, source: 'track-l' as const, artifact: p.value.artifact },
        why: null,
      };
    };

    ctx.routes.handle<unknown, z.output<typeof ResolveBodySchema>>('POST', '/svc-agent/resolve', async ({ body, signal }) => {
      if (body.tool !== undefined) {
        // Structured: each device must be registered; the plan names them by id.
        const steps = body.devices!.map((d) => ({ device: registry.resolve(d).deviceId, tool: body.tool!, arguments: body.arguments ?? {} }));
        return { plan: { steps, approved: false }, resolved_by: 'structured', note: null };
      }
      const ids = registry.list().map((d) => d.deviceId);
      const describer = await describerNow();
      let note: string | null = describer.why ? `${describer.why}; resolved by the rules` : null;
      const asked = describer.used ? { describer: describer.used } : {};
      if (describer.options) {
        try {
          const steps = await planByDescriber(describer.options, body.text!, ids, signal);
          return { plan: { steps, approved: false }, resolved_by: 'describer', note: null, ...asked };
        } catch (err) {
          note = `the describer gave no plan (${(err as Error).message}); resolved by the rules`;
        }
      }
      const ruled = resolveByRules(body.text!, ids, MAX_PLAN_STEPS);
      if ('unresolved' in ruled) throw new LookoutError('svc-agent.request_unresolved', ruled.unresolved, { details: { text: body.text!.slice(0, 200) } });
      return { plan: { steps: ruled.steps, approved: false }, resolved_by: 'rules', note, ...asked };
    });

    ctx.routes.handle<unknown, z.output<typeof ExecuteBodySchema>>('POST', '/svc-agent/execute', async ({ body, headers, signal }) => {
      const outcome = await executePlan(
        {
          steps: body.plan.steps,
          approved: body.plan.approved,
          dryRun: body.dry_run,
          callerMay: callerMayMutate(c.LOOKOUT_SVC_AGENT_APPROVAL_TOKEN, headers[APPROVAL_HEADER]),
          agent: body.agent,
        },
        { registry, tools, ring },
        signal,
      );
      if (outcome.refused && !body.dry_run) {
        throw new LookoutError('svc-agent.plan_refused', 'a step of the plan may not run under the policy; nothing ran', {
          details: {
            steps: outcome.steps
              .filter((s) => s.decision === 'refused')
              .map((s) => ({ index: s.index, tool: s.tool, device_id: s.device_id, reason: s.reason })),
          },
        });
      }
      return { dry_run: body.dry_run, approved: body.plan.approved, steps: outcome.steps };
    });

    // A device's notes are under device:<id>, so a device named "fleet" never shares the fleet's.
    const scopeOf = (device: string | undefined) => (device === undefined ? FLEET_SCOPE : `device:${device}`);
    const page = (agent: string, scope: string) => ({ agent, scope, notes: memory.list(agent, scope), limit: c.LOOKOUT_SVC_AGENT_MEMORY_NOTES });
    ctx.routes.handle<z.output<typeof MemoryQuery>>('GET', '/svc-agent/memory', ({ query }) => page(query.agent, scopeOf(query.device)));
    ctx.routes.handle<unknown, z.output<typeof MemoryPutBody>>('PUT', '/svc-agent/memory', ({ body }) => {
      memory.add(body.agent, scopeOf(body.device), body.note, new Date(ctx.clock.now()));
      return page(body.agent, scopeOf(body.device));
    });
    ctx.routes.handle<z.output<typeof MemoryDeleteQuery>>('DELETE', '/svc-agent/memory', ({ query }) => {
      const removed = memory.remove(query.agent, scopeOf(query.device), query.id);
      return { ...page(query.agent, scopeOf(query.device)), removed };
    });
  },
});
