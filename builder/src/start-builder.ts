import 'reflect-metadata';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { container as rootContainer } from 'tsyringe';
import { BUILDER_INFO, type BuilderInfo } from '../plugins/builder-meta/src/service.js';
import { BUILDER_PLUGINS, ESSENTIAL_BUILDER_PLUGINS } from './builder-plugins.js';
import { DEFAULT_BUILDER_BODY_LIMIT_BYTES, DEFAULT_BUILDER_PORT, type BuilderOptions } from './builder-options.js';
import { LookoutError, errorTable, packageVersion } from 'lookout/core';
import { createLogger, RouteRegistry, MemoryBus, loadPlugins, type LoadedRuntime } from 'lookout/core/host';
import { HUB_ROUTES, createHubApp, answerClientError, HubMetrics } from 'lookout/hub';
import { isLoopbackHost, boundPort, closeServer, listen } from 'lookout/lib/net';

export interface RunningBuilder {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly runtime: LoadedRuntime;
  close(): Promise<void>;
}

/**
 * Starts the builder: its stage plugins on the same SDK as the hub's (manifests, services, declared
 * routes), their state in one SQLite file, and the HTTP app composed from their routes the way the
 * hub composes its own (the same error bodies, bearer check and body bounds).
 */
export async function startBuilder(options: BuilderOptions = {}): Promise<RunningBuilder> {
  const logger = options.logger ?? createLogger({ name: 'lookout-builder' });
  const token = options.token;
  if (token !== undefined && token.length < 8) throw new LookoutError('config_invalid', '--token must be at least 8 characters', { details: { key: 'token' } });
  const host = options.host ?? (token ? '0.0.0.0' : '127.0.0.1');
  if (!token && !isLoopbackHost(host)) {
    throw new LookoutError('config_invalid', `--host ${host}: without --token the builder listens on loopback only`, {
      details: { key: '--host', value: host },
    });
  }
  const dataDir = resolve(options.dataDir ?? '.lookout-dev/builder');
  const routes = new RouteRegistry();
  const plugins = options.plugins ?? [...BUILDER_PLUGINS];
  const info: BuilderInfo = { version: packageVersion(), startedAt: Date.now(), tokenRequired: token !== undefined };
  const runtime = await loadPlugins({
    plugins,
    runtime: { kind: 'hub', id: 'lookout-builder', dataDir },
    // The builder talks to no broker: its plugins declare no topics, and the in-process bus refuses none.
    bus: new MemoryBus(),
    env: { ...process.env, ...(options.env ?? {}) },
    envSource: 'the builder options and environment',
    logger,
    routes,
    container: rootContainer.createChildContainer(),
    essential: [...ESSENTIAL_BUILDER_PLUGINS],
    hostServices: [
      { token: BUILDER_INFO, value: info },
      {
        token: HUB_ROUTES,
        value: {
          list: () => routes.list(),
          errorCodes: () => errorTable(plugins.map((p) => p.name)),
          pluginDescriptions: () => Object.fromEntries(plugins.map((p) => [p.name, p.description])),
        },
      },
    ],
  });
  try {
    const app = createHubApp({
      routes: routes.list(),
      metrics: new HubMetrics({ defaultMetrics: false }),
      logger,
      bodyLimitBytes: options.bodyLimitBytes ?? DEFAULT_BUILDER_BODY_LIMIT_BYTES,
      ...(token ? { token } : {}),
    });
    const handle = app.callback();
    const server = createServer({ requestTimeout: 60_000, headersTimeout: 20_000 }, (req, res) => void handle(req, res));
    server.on('clientError', answerClientError);
    await listen(server, options.port ?? DEFAULT_BUILDER_PORT, host, { name: 'the builder', key: '--port' });
    const port = boundPort(server, options.port ?? DEFAULT_BUILDER_PORT);
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
    info.httpUrl = url;
    logger.info({ url, dataDir, plugins: runtime.plugins.map((p) => p.name), auth: token ? 'bearer token' : 'none (loopback only)' }, 'builder listening');
    let closing: Promise<void> | undefined;
    return {
      url,
      port,
      dataDir,
      runtime,
      close: () =>
        (closing ??= (async () => {
          await closeServer(server);
          await runtime.stop();
        })()),
    };
  } catch (err) {
    await runtime.stop();
    throw err;
  }
}
