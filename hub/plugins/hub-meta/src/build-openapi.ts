import { z } from 'zod';
import { ErrorBodySchema } from 'lookout/core/contracts';
import { type ErrorTableEntry, type RouteEntry } from 'lookout/core';
import { operationDescription, operationErrors } from './operation-errors.js';
import { documentSignedUrl, SIGNED_URL_SCHEME } from './signed-url-openapi.js';

type JsonSchema = Record<string, unknown>;

export interface OpenApiInfo {
  title: string;
  version: string;
  /** SPDX identifier, as package.json gives it. */
  license?: string;
  serverUrl?: string;
  tokenRequired: boolean;
  /** The document's description (default: the hub's). */
  description?: string;
  /** The hub plugins by name, with their manifests' descriptions: the operations' tags. */
  plugins?: Record<string, string | undefined>;
}

const SUCCESS: Record<number, string> = {
  204: 'done, nothing to answer',
  206: 'the byte range asked for',
  304: 'not modified: the copy the client holds (If-None-Match) is current',
};

/**
 * OpenAPI 3.1 from the routes the hub plugins declared: zod v4 writes JSON Schema 2020-12, which is
 * OpenAPI 3.1's own dialect. Query and body are the schemas' input side (what a client sends),
 * responses their output side.
 */
export function buildOpenApi(routes: RouteEntry[], errors: ErrorTableEntry[], info: OpenApiInfo): JsonSchema {
  const table = new Map(errors.map((e) => [e.code as string, e]));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { plugin, decl } of [...routes].sort((a, b) => a.decl.path.localeCompare(b.decl.path))) {
    const { path, params } = openApiPath(decl.path);
    const op: Record<string, unknown> = {
      operationId: operationId(decl.method, decl.path),
      summary: decl.summary,
      description: operationDescription(plugin, decl, info),
      tags: [plugin],
      parameters: [...params.map((name) => pathParameter(name, decl.params?.[name])), ...queryParameters(decl.query)],
    };
    if (decl.body) {
      op.requestBody = { required: true, content: { 'application/json': { schema: toSchema(decl.body, 'input') } } };
    }
    const success: Record<string, unknown> = { description: decl.summary };
    const type = decl.produces ?? 'application/json';
    if (decl.response) success.content = { [type]: { schema: toSchema(decl.response, 'output') } };
    else if (decl.produces) success.content = { [type]: { schema: { type: 'string', contentMediaType: type } } };
    const responses: Record<string, unknown> = { '200': success };
    for (const status of decl.statuses ?? []) {
      responses[String(status)] = status === 206 ? { ...success, description: SUCCESS[206] } : { description: SUCCESS[status] ?? 'success' };
    }
    for (const [status, entries] of operationErrors(plugin, decl, table, info.tokenRequired)) {
      responses[String(status)] = {
        description: entries.map((e) => `\`${e.code}\`: ${e.message}`).join('; '),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
        'x-error-codes': entries.map((e) => e.code),
      };
    }
    op.responses = responses;
    if (decl.public || !info.tokenRequired) op.security = [];
    if (decl.signedUrl) documentSignedUrl(op, info.tokenRequired);
    (paths[path] ??= {})[decl.method.toLowerCase()] = op;
  }
  const doc: JsonSchema = {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description: info.description ?? 'Lookout hub: the fleet proxy. Routes are composed from the hub plugins\u2019 manifests.',
      ...(info.license ? { license: { name: info.license, identifier: info.license } } : {}),
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    tags: usedTags(routes, info.plugins ?? {}),
    paths,
    components: {
      schemas: { ErrorBody: errorBodySchema(), ErrorCode: errorCodeSchema(errors) },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, signedUrl: SIGNED_URL_SCHEME },
    },
  };
  if (info.tokenRequired) doc.security = [{ bearer: [] }];
  if (info.serverUrl) doc.servers = [{ url: info.serverUrl }];
  return doc;
}

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io, reused: 'inline', cycles: 'ref' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/**
 * A query parameter's schema is its value as the server parses it (the output side: `limit` is an
 * integer, `kind` an array of enumerated kinds), which is what an OpenAPI parameter schema states;
 * whether it is required is the input side's (a default makes it optional). An array is written
 * comma-separated (style form, explode false), as the core's queryList parses it.
 */
function queryParameters(query: z.ZodObject | undefined): unknown[] {
  if (!query) return [];
  const input = toSchema(query, 'input');
  const props = (toSchema(query, 'output').properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((input.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => {
    const p: Record<string, unknown> = { name, in: 'query', required: required.has(name), schema: s };
    if (typeof s.description === 'string') p.description = s.description;
    if (s.type === 'array') Object.assign(p, { style: 'form', explode: false });
    return p;
  });
}

/** `/debug/shadow/:device/logs` → `/debug/shadow/{device}/logs`; a wildcard `/api/*rest` → `/api/{rest}`. */
function openApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const converted = path.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: converted, params };
}

function pathParameter(name: string, description: string | undefined): Record<string, unknown> {
  return { name, in: 'path', required: true, ...(description ? { description } : {}), schema: { type: 'string' } };
}

function operationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0].toUpperCase() + w.slice(1))].join('');
}

/** The error body, its code pointing at the enumerated ErrorCode. */
function errorBodySchema(): JsonSchema {
  const body = toSchema(ErrorBodySchema, 'output') as { properties: { error: { properties: Record<string, unknown> } } };
  body.properties.error.properties.code = { $ref: '#/components/schemas/ErrorCode' };
  return body;
}

/** Every code the hub may answer with, each with its status and meaning (plugins' own codes included). */
function errorCodeSchema(errors: ErrorTableEntry[]): JsonSchema {
  return {
    type: 'string',
    enum: errors.map((e) => e.code),
    description: 'The error codes of the core and of the loaded plugins (`<plugin>.<code>`); `x-error-codes` gives each one’s HTTP status and meaning.',
    'x-error-codes': errors.map((e) => ({ code: e.code, status: e.status, description: e.message, ...(e.plugin ? { plugin: e.plugin } : {}) })),
  };
}

/** One tag per plugin that serves a route, described as its manifest describes the plugin. */
function usedTags(routes: RouteEntry[], plugins: Record<string, string | undefined>): unknown[] {
  const names = [...new Set(routes.map((r) => r.plugin))].sort();
  return names.map((name) => ({ name, description: plugins[name] ?? `Routes of the ${name} hub plugin` }));
}
