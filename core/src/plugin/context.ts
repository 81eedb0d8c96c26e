import type { DependencyContainer } from 'tsyringe';
import type { z } from 'zod';
import type { Logger } from '../log/logger.js';
import type { LayerId, HttpMethod, PluginManifest } from './manifest.js';
import type { ServiceToken } from './service-token.js';
import type { DeviceInfo } from './device-info.js';

/** Facts about the process hosting the plugins, set by `lookout-edge` or `lookout-hub`. */
export interface RuntimeInfo {
  kind: 'device' | 'hub';
  /** Device id on a device, hub id on the hub. */
  id: string;
  /** Root under which the spec's device paths live (`/` on a device). */
  dataDir: string;
  layer?: LayerId;
  image?: string;
  role?: string;
  /** Set by the device host: roles, source, versions, asked ports, live plugin states (read with `deviceInfo`). */
  device?: Partial<DeviceInfo>;
}

/** Publishing limited to the topics the manifest declares; topics are relative to the namespace. */
export interface PluginBus {
  /** The prefix topics are relative to, e.g. `devices/cam-1/` (empty on the hub). */
  readonly namespace: string;
  publish(suffix: string, payload: unknown, options?: { retain?: boolean }): Promise<void>;
  subscribe(filter: string, handler: (topic: string, payload: Buffer, meta: { retain: boolean }) => void): Promise<() => Promise<void>>;
  readonly connected: boolean;
  onConnect(listener: () => void): void;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- tool and route arguments default to any so that a
   handler destructures what its manifest's zod schema already validated, without restating the type. */
export interface ToolCallContext {
  signal: AbortSignal;
}
/** Answers one call of a declared tool: `args` already passed the tool's input schema; `call.signal` aborts when the caller gives up. */
export type ToolHandler<I = any, O = unknown> = (args: I, call: ToolCallContext) => Promise<O> | O;

/** Where a plugin registers the handlers of the tools its manifest declares. */
export interface PluginTools {
  register<I = any, O = unknown>(name: string, handler: ToolHandler<I, O>): void;
}

/** What a route handler receives: query and body already checked against the route's declared schemas (unless it declares `rawBody`). */
export interface RouteRequest<Q = any, B = any> {
  query: Q;
  body: B;
  params: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  signal: AbortSignal;
  /** Routes declared with `rawBody`: every query parameter as sent, declared or not (a signature covers them all). */
  rawQuery?: Record<string, string | string[] | undefined>;
  /** Routes declared with `rawBody`: the body's bytes as received (empty when none). */
  rawBody?: Buffer;
  /** Routes declared with `rawBody`: parses `rawBody` as JSON and checks it against the declared body (400 naming the field). */
  parseBody?: () => B;
}
/** A handler returns JSON (200) or a full reply for other statuses and content types. */
export interface RouteReply {
  status?: number;
  body: unknown;
  type?: string;
  headers?: Record<string, string>;
}
/** Returns (or resolves to) the answer. */
export type RouteHandler<Q = any, B = any> = (req: RouteRequest<Q, B>) => unknown;

/** Where a hub plugin registers the handlers of the HTTP routes its manifest declares. */
export interface PluginRoutes {
  handle<Q = any, B = any>(method: HttpMethod, path: string, handler: RouteHandler<Q, B>): void;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Services shared between plugins by typed token, limited to what the manifest lists in `provides`, `requires` and `optionalRequires`. */
export interface PluginServices {
  /** Provides a service the manifest lists in `provides`. */
  provide<T>(token: ServiceToken<T>, value: T): void;
  /** A service the manifest lists in `requires`; throws `service_unavailable` when its provider is down. */
  get<T>(token: ServiceToken<T>): T;
  /** A service listed in `optionalRequires`; undefined when its provider is not loaded or not running. */
  optional<T>(token: ServiceToken<T>): T | undefined;
}

/** Timers that the loader clears when the plugin stops, and the time source (replaceable in tests). */
export interface PluginClock {
  now(): number;
  setInterval(fn: () => void, ms: number): NodeJS.Timeout;
  setTimeout(fn: () => void, ms: number): NodeJS.Timeout;
  clear(timer: NodeJS.Timeout): void;
}

/** A plugin's own health as it reports it; status, hello and the health tools show it. */
export type HealthState = 'starting' | 'ok' | 'degraded' | 'failed';
/** How a plugin reports its health to the runtime (and so to status, hello and the health tools). */
export interface PluginHealth {
  set(state: HealthState, message?: string): void;
  /**
   * Marks the plugin failed with the error's code and message while it keeps what it registered
   * (a detector whose model failed its checks still answers its status tool); plugins that need
   * it are skipped.
   */
  fail(error: unknown): void;
}

/** The ports the runtime's plugins listen on, announced so that hello and identity name them. */
export interface PluginPorts {
  /**
   * Tell the runtime a port this plugin listens on (announced in `hello` and identity); `tls`: it
   * serves TLS with the device certificate (the hello's `tls` list names it, the hub dials https and pins).
   */
  announce(name: string, port: number, options?: { tls?: boolean }): void;
  all(): Record<string, number>;
  /** Surfaces announced with `tls` (a surface announced again without it leaves the list). */
  tls(): string[];
}

/** Everything the runtime hands a plugin at start: its config parsed by the manifest's schema, a logger, a DI container, and the bus, tools, routes and services limited to what the manifest declares. */
export interface PluginContext<C = Record<string, unknown>> {
  name: string;
  runtime: RuntimeInfo;
  config: C;
  log: Logger;
  container: DependencyContainer;
  bus: PluginBus;
  tools: PluginTools;
  routes: PluginRoutes;
  services: PluginServices;
  clock: PluginClock;
  health: PluginHealth;
  ports: PluginPorts;
  /** Runs at stop, after the plugin's own stop, in reverse order of registration. */
  onStop(fn: () => unknown): void;
  /**
   * Runs once every plugin of the runtime has started (in start order), e.g. to begin work that
   * plugins starting after this one add to. A failure there is logged and marks the plugin failed.
   */
  onStarted(fn: () => unknown): void;
  /**
   * Runs once the plugins that use this one (its services in their `requires` or
   * `optionalRequires`, its name in their `dependsOn` or `optionalDependsOn`) have started, failed
   * or been skipped: before the plugins that start after the last of them, and before every
   * `onStarted`. Work whose form they choose at their start (the encoder's outputs) begins then, not
   * once for nobody and again for them. After a restart, once its dependents are back. A failure is
   * as in `onStarted`.
   */
  onDependentsStarted(fn: () => unknown): void;
}

/** What `start` may return: `stop` runs when the runtime stops the plugin or restarts it after a failure. */
export interface PluginInstance {
  stop?(): unknown;
}

/** A plugin: its manifest plus `start`, which receives the context with `config` parsed by the manifest's `config` schema. Write it with `definePlugin`. */
export interface Plugin<C extends z.ZodObject = z.ZodObject> extends PluginManifest<C> {
  start(ctx: PluginContext<z.output<C>>): Promise<PluginInstance | void> | PluginInstance | void;
}

/** Identity function that gives plugin authors type inference for `ctx.config`. */
export function definePlugin<C extends z.ZodObject>(plugin: Plugin<C>): Plugin<C> {
  return plugin;
}
