import { z } from 'zod';
import type { ServiceToken } from './service-token.js';

/** The deployment layers, smallest first; a device plugin runs when the active layer is its own or above. */
export const LAYER_IDS = ['layer0', 'layer1', 'layer2', 'layer3', 'layer4', 'layer5'] as const;
/** One of LAYER_IDS. */
export type LayerId = (typeof LAYER_IDS)[number];

/** A topic a plugin publishes, relative to its runtime's namespace (`devices/<id>/` on a device). */
export interface TopicDecl {
  /** e.g. `dets`, `telemetry/wifi`, `events/+` (a `+` or `#` lets the plugin fill that level). */
  suffix: string;
  qos: 0 | 1 | 2;
  retain?: boolean;
  /** Human rate from the spec, e.g. `about 10 Hz`. */
  rate?: string;
  /** Also published under `shadow/<id>/<suffix>` (the spec's telemetry mirror). */
  mirror?: boolean;
  /** Payloads are checked against this before they leave. */
  schema?: z.ZodType;
  description?: string;
}

/** A tool a plugin serves to the hub and MCP clients: its name, description, and the zod schemas its arguments and result are checked against. */
export interface ToolDecl {
  name: string;
  description: string;
  input: z.ZodObject;
  output?: z.ZodType;
  /**
   * Calling it twice with the same arguments has the effect of calling it once. Only such tools are
   * retried after a failure that may have reached the device (the hub's pool); default false.
   */
  idempotent?: boolean;
  /** It changes nothing on the device (a read): implies idempotent. Default false. */
  readOnly?: boolean;
  /**
   * Its result carries a picture: the names of the result's fields holding the base64 bytes and
   * their MIME type. The MCP answer then adds an image content block beside `structuredContent`,
   * so that MCP clients show the picture; the structured result stays as it is.
   */
  imageContent?: { dataField: string; mimeTypeField: string };
}

/** The HTTP methods a route may declare. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** An HTTP route a hub plugin serves: the hub checks requests against its schemas and documents it in OpenAPI from these fields. */
export interface RouteDecl {
  method: HttpMethod;
  /** Koa-router path, e.g. `/fleet/registry` or `/debug/shadow/:device/logs`. */
  path: string;
  summary: string;
  /** What the route does beyond its summary, for the OpenAPI operation's description. */
  description?: string;
  /**
   * The error codes the route may answer besides those every route may (ANY_ROUTE_ERRORS, the token's
   * and a body's: the hub's composition adds them): core codes (`target_unknown`, DEVICE_CALL_ERRORS
   * for a route that calls a device), the plugin's own by short name, or another plugin's in full
   * (`a2a.peer_unreachable`). The OpenAPI operation declares each one's status from the table.
   */
  errors?: readonly string[];
  /** What each path parameter (`:device`) is, for the OpenAPI parameter's description. */
  params?: Readonly<Record<string, string>>;
  /** Success statuses besides 200 it may answer (206 for a byte range, 304 for a conditional GET, 204). */
  statuses?: readonly number[];
  query?: z.ZodObject;
  body?: z.ZodType;
  response?: z.ZodType;
  /** Content type of a successful answer when it is not JSON (e.g. `image/jpeg`). */
  produces?: string;
  /** Reachable without the bearer token: liveness, and routes that authenticate each request themselves (signed A2A queries). */
  public?: boolean;
  /**
   * GET (and HEAD) also accept a signed, expiring URL (`exp`, `sig`; core/src/auth/signed-url.ts)
   * without the bearer token, for players that cannot send a header. A request that carries a
   * signature is judged by it alone.
   */
  signedUrl?: boolean;
  /**
   * The handler gets the body's exact bytes as `rawBody` (a signature covers them) and validates it
   * when it chooses, with `parseBody()`; `body` then describes it (OpenAPI) and is not checked first.
   */
  rawBody?: boolean;
  /**
   * On a hub listening on loopback, browser pages of loopback origins (localhost, 127.0.0.1, [::1],
   * any port) may call it besides the configured origins, as MCP asks of a local server (its
   * inspector runs on a port of its own); beyond loopback only the configured origins may.
   */
  localOrigins?: boolean;
}

/** An error code a plugin adds to the error table, namespaced by the plugin's name. */
export interface PluginErrorDecl {
  /** lower snake_case, without the plugin prefix: `greeting_refused` becomes `hello.greeting_refused`. */
  code: string;
  /** HTTP status the hub answers with. */
  status: number;
  description: string;
}

/** What a plugin declares before any of its code runs: identity, core range, layer, dependencies, config schema, topics, tools, routes, services and error codes. The loader validates it and holds the plugin to it. */
export interface PluginManifest<C extends z.ZodObject = z.ZodObject> {
  name: string;
  version: string;
  /** Semver range of the core this plugin was written for, e.g. `^1`. */
  core: string;
  description?: string;
  /** Device plugins: enabled from this layer up. Hub plugins leave it out. */
  layer?: LayerId;
  dependsOn?: string[];
  /** Used when loaded, ignored when not. */
  optionalDependsOn?: string[];
  config?: C;
  topics?: TopicDecl[];
  /**
   * Topic filters the plugin subscribes to, relative to its namespace (e.g. `cmd/#`; a hub plugin's
   * namespace is empty: `devices/+/status`). A device plugin may also name the peer directory,
   * `devices/+/hello`, as it is: the one filter outside its namespace the bus ACL lets it read.
   */
  subscriptions?: string[];
  tools?: ToolDecl[];
  routes?: RouteDecl[];
  /** Services this plugin provides (it calls `ctx.services.provide` for each during start). */
  provides?: ServiceToken<unknown>[];
  /** Services it needs: their providers start first, and it is skipped when one of them failed. */
  requires?: ServiceToken<unknown>[];
  /** Services it uses when their provider is loaded and running (`ctx.services.optional`). */
  optionalRequires?: ServiceToken<unknown>[];
  /** Error codes of its own; each is `<plugin name>.<code>` on the wire and joins the error table. */
  errors?: PluginErrorDecl[];
  /** Stop the whole runtime when this plugin fails (the image can also mark plugins essential). */
  essential?: boolean;
  /** Start timeout in ms (default from the loader). */
  startTimeoutMs?: number;
}

const NAME = /^[a-z][a-z0-9-]*$/;
const CORE_RANGE = /^(?:\*|(?:\^|>=)?\d+(?:\.(?:\d+|x|\*)){0,2})$/;
// Duck-typed rather than instanceof: a third-party plugin may bring its own copy of zod v4.
const isZodSchema = (v: unknown): boolean =>
  typeof (v as { safeParse?: unknown } | null)?.safeParse === 'function' && typeof (v as { _zod?: unknown })._zod === 'object';
const zodSchema = z.custom<z.ZodType>(isZodSchema, 'a zod schema');
const zodObject = z.custom<z.ZodObject>((v) => isZodSchema(v) && typeof (v as { shape?: unknown }).shape === 'object', 'a zod object schema');

const serviceTokenSchema = z.object({ name: z.string().min(1) }, 'a service token (serviceToken(name))');

/** The manifest as data, checked before any plugin code runs. */
export const ManifestSchema = z.object({
  name: z.string().regex(NAME, 'lower-case letters, digits and dashes, starting with a letter'),
  version: z.string().regex(/^\d+\.\d+\.\d+/, 'a semver version'),
  // Only the forms coreSatisfies reads; anything else would be misread as compatible.
  core: z.string().regex(CORE_RANGE, 'a core range: *, ^1, ^1.2, ^1.2.3, 1.x, >=1.2.3 or 1.2.3'),
  description: z.string().optional(),
  layer: z.enum(LAYER_IDS).optional(),
  dependsOn: z.array(z.string().regex(NAME)).optional(),
  optionalDependsOn: z.array(z.string().regex(NAME)).optional(),
  config: zodObject.optional(),
  topics: z
    .array(
      z.object({
        suffix: z.string().regex(/^[a-z0-9_+#]+(\/[a-z0-9_+#]+)*$/i),
        qos: z.union([z.literal(0), z.literal(1), z.literal(2)]),
        retain: z.boolean().optional(),
        rate: z.string().optional(),
        mirror: z.boolean().optional(),
        schema: zodSchema.optional(),
        description: z.string().optional(),
      }),
    )
    .optional(),
  subscriptions: z.array(z.string().min(1)).optional(),
  tools: z
    .array(
      z.object({
        name: z.string().regex(/^[a-z][a-z0-9_]*$/),
        description: z.string().min(1),
        input: zodObject,
        output: zodSchema.optional(),
        idempotent: z.boolean().optional(),
        readOnly: z.boolean().optional(),
        imageContent: z.object({ dataField: z.string().min(1), mimeTypeField: z.string().min(1) }).optional(),
      }),
    )
    .optional(),
  routes: z
    .array(
      z.object({
        method: z.enum(['GET', 'POST', 'PUT', 'DELETE']),
        path: z.string().startsWith('/'),
        summary: z.string().min(1),
        description: z.string().min(1).optional(),
        errors: z.array(z.string().regex(/^([a-z][a-z0-9-]*\.)?[a-z][a-z0-9_]*$/, 'an error code: `code` or `<plugin>.<code>`')).optional(),
        statuses: z.array(z.number().int().min(200).max(399)).optional(),
        params: z.record(z.string(), z.string().min(1)).optional(),
        query: zodObject.optional(),
        body: zodSchema.optional(),
        response: zodSchema.optional(),
        produces: z.string().optional(),
        public: z.boolean().optional(),
        signedUrl: z.boolean().optional(),
        rawBody: z.boolean().optional(),
        localOrigins: z.boolean().optional(),
      }),
    )
    .optional(),
  provides: z.array(serviceTokenSchema).optional(),
  requires: z.array(serviceTokenSchema).optional(),
  optionalRequires: z.array(serviceTokenSchema).optional(),
  errors: z
    .array(
      z.object({
        code: z.string().regex(/^[a-z][a-z0-9_]*$/, 'lower snake_case, without the plugin prefix'),
        status: z.number().int().min(400).max(599),
        description: z.string().min(1),
      }),
    )
    .optional(),
  essential: z.boolean().optional(),
  startTimeoutMs: z.number().int().positive().optional(),
});
