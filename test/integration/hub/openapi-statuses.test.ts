/**
 * The hub's OpenAPI document says every status its routes answer. A hub with a token and the full
 * plugin set, one registered device that is down (every port it announced is closed) and one that is
 * up (a fake MCP tool server on 127.0.0.1); then every operation of /openapi.json is called without
 * the token, with a bad query or body, against the down device, the up device and a device no one
 * knows. Every status seen must be declared for that operation, an error body must be the DESIGN.md
 * `{ error: { code, message, details? } }` with a code of the table whose status it was answered
 * with, and that code must be one the operation lists under that status (`x-error-codes`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startFakeMcpDevice, type FakeMcpDevice } from '../../support/fake-mcp-device.js';
import { freePort } from '../../support/free-port.js';
import { endClient, mqttClient, msg, publish, testHub, waitFor, api } from '../../support/hub-helpers.js';

const TOKEN = 'openapi-statuses-token-5c0e';
const DOWN = 'cam-down';
const UP = 'cam-up';
const UNKNOWN = 'cam-404';

type Json = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  op: Json;
}
interface Call {
  why: string;
  method: string;
  url: string;
  token: boolean;
  body?: string;
  contentType?: string;
  /** Sign it through POST /a2a/sign first (an operation that authenticates each request by its signature). */
  sign?: boolean;
}
interface Seen {
  operation: string;
  call: Call;
  status: number;
  code?: string;
  problem?: string;
}

/** Valid bodies of the operations that take one (by operationId); a new one must be added here. */
const BODIES: Record<string, (device: string) => unknown> = {
  postToolsCall: () => ({ tool: 'get_system_health', arguments: {} }),
  putCameraProfile: () => ({ fps: 5 }),
  postMediaClipsSign: (device) => ({ device, file: 'chunk_20240101T000000Z.mp4' }),
  postA2aSign: (device) => ({ method: 'POST', path: '/a2a/query', query: { q: 'peer_hello', target: device } }),
  postSvcAgentResolve: (device) => ({ tool: 'get_system_health', devices: [device] }),
  postSvcAgentExecute: (device) => ({ plan: { steps: [{ device, tool: 'get_system_health', arguments: {} }] } }),
  postFleetRemediate: (device) => ({ devices: [device] }),
  putSvcAgentMemory: (device) => ({ agent: 'agent-1', device, note: 'a note' }),
  postFleetProvisionShadow: (device) => ({ device_id: device, host: '127.0.0.1', port: 1, mqtt_url: 'mqtt://127.0.0.1:1883', hello_timeout_s: 1 }),
  postFleetTransfers: (device) => ({ device, chunks: ['20240101T000000000Z_000001.h265'] }),
  postMcp: (device) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: `${device}.get_system_health`, arguments: {} } }),
};

/** A path parameter's value for a device. */
function paramValue(name: string, device: string): string {
  if (name === 'device') return device;
  if (name === 'file') return 'chunk_20240101T000000Z.mp4';
  if (name === 'label') return device === UNKNOWN ? 'nowhere' : `${device}-label`;
  return 'x';
}

/** A valid value of a query parameter (its schema's), the device where it names one. */
function queryValue(name: string, schema: Json, device: string): string | undefined {
  if (name === 'target' || name === 'device') return device;
  if (name === 'exp' || name === 'sig') return undefined;
  const s = schema.type === 'array' ? schema.items : schema;
  if (Array.isArray(s?.enum)) return String(s.enum[0]);
  if (s?.type === 'integer' || s?.type === 'number') return String(s.default ?? s.minimum ?? 1);
  if (s?.type === 'boolean') return 'true';
  return s?.default !== undefined ? String(s.default) : 'x';
}

function urlFor(o: Operation, device: string, opts: { omitRequired?: boolean } = {}): string {
  const params = (o.op.parameters ?? []) as Json[];
  const path = o.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(paramValue(name, device)));
  const query = new URLSearchParams();
  for (const p of params.filter((p) => p.in === 'query')) {
    if (opts.omitRequired && p.required) continue;
    if (!p.required && !['target', 'device'].includes(p.name)) continue;
    const v = queryValue(p.name, p.schema ?? {}, device);
    if (v !== undefined) query.set(p.name, v);
  }
  const qs = query.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The calls that make an operation refuse: no token, bad input, each kind of device. */
function callsFor(o: Operation): Call[] {
  const id = o.op.operationId as string;
  const hasBody = o.op.requestBody !== undefined;
  if (hasBody) assert.ok(BODIES[id], `${id} takes a body: add a valid one to BODIES`);
  const body = (device: string) => (hasBody ? { body: JSON.stringify(BODIES[id](device)), contentType: 'application/json' } : {});
  const calls: Call[] = [
    { why: 'no token', method: o.method, url: urlFor(o, DOWN), token: false, ...body(DOWN) },
    { why: 'down device', method: o.method, url: urlFor(o, DOWN), token: true, ...body(DOWN) },
    { why: 'up device', method: o.method, url: urlFor(o, UP), token: true, ...body(UP) },
    { why: 'unknown device', method: o.method, url: urlFor(o, UNKNOWN), token: true, ...body(UNKNOWN) },
  ];
  const required = ((o.op.parameters ?? []) as Json[]).some((p) => p.in === 'query' && p.required);
  if (required) calls.push({ why: 'no required query', method: o.method, url: urlFor(o, DOWN, { omitRequired: true }), token: true, ...body(DOWN) });
  // A signed query reaches the device (A2A): a down, an up (no sidecar announced) and an unknown one.
  if (o.op.security?.length === 0 && ((o.op.parameters ?? []) as Json[]).some((p) => p.name === 'target')) {
    for (const [why, device] of [
      ['signed, down device', DOWN],
      ['signed, up device', UP],
      ['signed, unknown device', UNKNOWN],
    ] as const) {
      calls.push({ why, method: o.method, url: urlFor(o, device), token: false, sign: true });
    }
  }
  if (hasBody) {
    const url = urlFor(o, DOWN);
    calls.push({ why: 'body not an object', method: o.method, url, token: true, body: '["x"]', contentType: 'application/json' });
    calls.push({ why: 'body not JSON', method: o.method, url, token: true, body: '{', contentType: 'application/json' });
    calls.push({ why: 'body not declared JSON', method: o.method, url, token: true, body: 'x', contentType: 'text/plain' });
  }
  return calls;
}

async function perform(base: string, call: Call): Promise<{ status: number; type: string; text?: string }> {
  const headers: Record<string, string> = {};
  if (call.sign) Object.assign(headers, await signatureHeaders(base, call));
  if (call.token) headers.authorization = `Bearer ${TOKEN}`;
  if (call.contentType) headers['content-type'] = call.contentType;
  const res = await fetch(base + call.url, {
    method: call.method,
    headers,
    ...(call.body !== undefined ? { body: call.body } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const type = res.headers.get('content-type') ?? '';
  // A success may be an endless stream (events, live video): its status is all that is judged.
  if (res.status < 400) {
    await res.body?.cancel();
    return { status: res.status, type };
  }
  return { status: res.status, type, text: await res.text() };
}

/** The A2A signature headers of a call, from the hub's own POST /a2a/sign. */
async function signatureHeaders(base: string, call: Call): Promise<Record<string, string>> {
  const url = new URL(base + call.url);
  const query = Object.fromEntries(url.searchParams);
  const signed = await api(base, '/a2a/sign', { token: TOKEN, json: { method: call.method, path: url.pathname, query } });
  assert.equal(signed.status, 200, signed.text);
  return signed.body.headers as Record<string, string>;
}

/** What is wrong with an answer against the operation's declared responses (undefined: nothing). */
function judge(op: Json, codes: Map<string, number>, seen: { status: number; type: string; text?: string }): { problem?: string; code?: string } {
  const declared = op.responses?.[String(seen.status)] as Json | undefined;
  if (!declared) return { problem: `status ${seen.status} not declared`, ...codeOf(seen.text) };
  if (seen.status < 400) return {};
  if (!seen.type.includes('application/json')) return { problem: `error answered as ${seen.type}` };
  let body: Json;
  try {
    body = JSON.parse(seen.text ?? '');
  } catch {
    return { problem: 'error body is not JSON' };
  }
  // POST /mcp speaks JSON-RPC: its refusals of a message are JSON-RPC errors (numeric codes), which MCP clients read.
  if (op.operationId === 'postMcp' && body?.jsonrpc === '2.0') {
    return typeof body.error?.code === 'number' && typeof body.error?.message === 'string' ? {} : { problem: `not a JSON-RPC error: ${seen.text}` };
  }
  const e = body?.error;
  const keys = Object.keys(body ?? {});
  if (keys.length !== 1 || typeof e?.code !== 'string' || typeof e?.message !== 'string')
    return { problem: `error body not { error: { code, message } }: ${seen.text}` };
  if (Object.keys(e).some((k) => !['code', 'message', 'details'].includes(k))) return { problem: `error body has extra fields: ${seen.text}`, code: e.code };
  if (codes.get(e.code) !== seen.status) return { problem: `code ${e.code} is not in the table with status ${seen.status}`, code: e.code };
  const listed = declared['x-error-codes'] as string[] | undefined;
  if (!listed?.includes(e.code)) return { problem: `code ${e.code} not listed under ${seen.status}`, code: e.code };
  return { code: e.code };
}

function codeOf(text: string | undefined): { code?: string } {
  try {
    const code = (JSON.parse(text ?? '') as Json)?.error?.code;
    return typeof code === 'string' ? { code } : {};
  } catch {
    return {};
  }
}

describe('OpenAPI declares every status the hub routes answer', () => {
  let hub: RunningHub;
  let up: FakeMcpDevice;
  let client: MqttClient;
  let doc: Json;
  const seen: Seen[] = [];

  before(async () => {
    const set = await loadHubPluginSet();
    const closed = await freePort();
    hub = await testHub({
      token: TOKEN,
      host: '127.0.0.1',
      plugins: set.plugins,
      essential: set.essential,
      toolTimeoutMs: 3000,
      env: {
        LOOKOUT_HUB_CAMERA_PROBE_TIMEOUT_MS: '2000',
        LOOKOUT_HUB_CAMERA_TOOL_TIMEOUT_MS: '3000',
        LOOKOUT_HUB_OCR_TOOL_TIMEOUT_MS: '3000',
        A2A_PEER_TIMEOUT_MS: '2000',
      },
    });
    up = await startFakeMcpDevice([{ name: 'get_system_health', annotations: { readOnlyHint: true } }]);
    client = await mqttClient(hub.brokerUrl);
    const downHello = msg.hello(DOWN, ['127.0.0.1'], closed, [`${DOWN}-label`]);
    const ports = { tools: closed, rtsp: closed, live: closed, onvif: closed, sidecar: closed };
    await publish(client, `devices/${DOWN}/hello`, { ...downHello, ports });
    await publish(client, `devices/${UP}/hello`, msg.hello(UP, ['127.0.0.1'], up.port, [`${UP}-label`]));
    for (const id of [DOWN, UP]) {
      await waitFor(`${id}'s hello`, async () => (await api(hub.url, `/fleet/registry?device=${id}`, { token: TOKEN })).body.shadows?.[0]);
    }
    doc = (await api(hub.url, '/openapi.json', { token: TOKEN })).body;
    const codes = new Map<string, number>(
      (doc.components.schemas.ErrorCode['x-error-codes'] as { code: string; status: number }[]).map((e) => [e.code, e.status]),
    );
    const operations: Operation[] = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json })),
    );
    // One operation at a time: the refusals are judged, not the hub's behaviour under load.
    for (const o of operations) {
      for (const call of callsFor(o)) {
        const answer = await perform(hub.url, call);
        seen.push({ operation: `${o.method} ${o.path}`, call, status: answer.status, ...judge(o.op, codes, answer) });
      }
    }
  });

  after(async () => {
    if (client) await endClient(client);
    await up?.close();
    await hub?.close();
  });

  it('answers only declared statuses, with declared codes, on every operation', () => {
    const wrong = seen.filter((s) => s.problem);
    const lines = wrong.map((s) => `${s.call.method} ${s.call.url} (${s.call.why}): ${s.status} ${s.code ?? ''} — ${s.problem}`);
    const undeclared = new Set(wrong.filter((s) => /not declared/.test(s.problem!)).map((s) => `${s.operation} ${s.status}`));
    console.log(`# ${seen.length} calls, ${wrong.length} problems, ${undeclared.size} undeclared (operation, status): ${[...undeclared].join('; ')}`);
    assert.deepEqual(lines, []);
  });

  // What spectral's spectral:oas ruleset checks of operations (operation-operationId-unique,
  // operation-description, operation-tags, operation-tag-defined, oas3-parameter-description),
  // checked here. Spectral is not a dependency: its core and rulesets alone are 156 packages, 52 MB
  // (the CLI more, with an install-time analytics package). Run by hand on this document
  // (spectral:oas, all rules) it warns only of info.contact (the package names none) and of
  // license.url, which OpenAPI 3.1 forbids beside the SPDX identifier the document gives.
  it('gives every operation a unique operationId, a description, a summary, a tag the document lists and described parameters', () => {
    const tags = new Set(((doc.tags ?? []) as Json[]).map((t) => t.name));
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.ok(op.operationId && !ids.has(op.operationId), `${where}: a unique operationId`);
        ids.add(op.operationId);
        for (const p of (op.parameters ?? []) as Json[]) assert.ok(p.description, `${where}: parameter ${p.name} has a description`);
        assert.ok(typeof op.summary === 'string' && op.summary.length > 0, `${where}: summary`);
        assert.ok(typeof op.description === 'string' && op.description.length > 0, `${where}: description`);
        assert.equal(op.tags?.length, 1, `${where}: one tag`);
        assert.ok(tags.has(op.tags[0]), `${where}: tag ${op.tags[0]} is described in the document's tags`);
      }
    }
  });
});
