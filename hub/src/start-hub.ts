import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { container as rootContainer } from 'tsyringe';
import { type BusPort, LogRing, RouteRegistry, createLogger, loadPlugins, type LoadedRuntime } from 'lookout/core/host';
import { busPassword, HUB_BUS_USER, deviceBusCredentials, loadFleetSecret, signedUrlKey } from 'lookout/lib/auth';
import { urlForLog, MqttBus } from 'lookout/lib/mqtt';
import { EmbeddedBroker } from './broker/embedded-broker.js';
import { decideBrokerListeners } from './broker/broker-transport.js';
import { LookoutError, packageVersion, errorTable } from 'lookout/core';
import { hubBusClientId } from './hub-bus-client-id.js';
import { decideHubTransport } from './http/hub-transport.js';
import { startHubServer } from './http/tls-server.js';
import { createHubApp } from './http/create-app.js';
import { HubMetrics } from './hub-metrics.js';
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_BROKER_PORT, DEFAULT_HUB_PORT, DEFAULT_MIRROR_INTERVAL_MS, type HubOptions } from './hub-options.js';
import { loadHubPluginSet } from './hub-plugin-set.js';
import { HUB_INFO, HUB_METRICS, HUB_ROUTES, HUB_SHARED, HUB_STATE, type DividedApply, type HubInfo, type HubStateStore } from './services/hub-services.js';
import { MemorySharedState } from './state/memory-shared-state.js';
import { FileStateStore } from './state/file-state-store.js';
import { RedisConnection } from './state/redis-connection.js';
import { RedisStateStore } from './state/redis-state-store.js';
import { RedisSharedState } from './state/redis-shared-state.js';
import { IngestRelay } from './state/ingest-relay.js';
import { DeviceTopicsBus } from './state/device-topics-bus.js';
import { DirectIngest } from './state/direct-ingest.js';
import { brokerTrust } from './state/broker-trust.js';
import { hubTlsPaths } from 'lookout/lib/tls';
import { isLoopbackHost, DeviceNetworks } from 'lookout/lib/net';

/** The bus-cache plugin's state key (its cache-state.ts): the saved latest cache the ingest cursor goes with. */
const BUS_CACHE_STATE_KEY = 'bus-cache';

export interface RunningHub {
  /** `http(s)://host:port` to reach the hub (loopback when it listens on every address). */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** Broker URL without credentials (embedded or external). */
  readonly brokerUrl: string;
  /** Set when the hub runs the embedded broker: its plain listener's port. */
  readonly brokerPort?: number;
  /** The embedded broker's bound addresses: plain MQTT, and MQTT over TLS when it listens so. */
  readonly brokerListeners?: { plain: { host: string; port: number }; tls?: { host: string; port: number; url: string } };
  readonly tokenRequired: boolean;
  readonly runtime: LoadedRuntime;
  readonly metrics: HubMetrics;
  /** The bus user name and password of a device (derived from the fleet secret), for devices started beside the hub. */
  deviceCredentials(deviceId: string): { username: string; password: string };
  /** Stops HTTP, the plugins (reverse order), the bus and the embedded broker. */
  close(): Promise<void>;
}

/**
 * Starts the hub: the broker (embedded unless an external URL is given), the bus, the hub plugins
 * of the plugin set, and the Koa app composed from the routes they declared.
 */
export async function startHub(options: HubOptions = {}): Promise<RunningHub> {
  const logRing = options.logRing ?? (options.logger ? undefined : new LogRing());
  const logger = options.logger ?? createLogger({ name: 'lookout-hub', ...(logRing ? { ring: logRing } : {}) });
  const token = options.token;
  if (token !== undefined && token.length < 8) {
    throw new LookoutError('config_invalid', '--token must be at least 8 characters', { details: { key: 'token' } });
  }
  const host = options.host ?? (token ? '0.0.0.0' : '127.0.0.1');
  const brokerHost = options.brokerHost ?? (token ? host : '127.0.0.1');
  for (const [flag, h] of [
    ['--host', host],
    ['--broker-host', brokerHost],
  ] as const) {
    if (!token && !isLoopbackHost(h)) {
      throw new LookoutError(
        'config_invalid',
        `${flag} ${h}: without --token the hub listens on loopback only (127.0.0.1); set --token to listen on other addresses`,
        { details: { key: flag, value: h } },
      );
    }
  }
  if (options.anonymousBroker && !isLoopbackHost(brokerHost)) {
    throw new LookoutError('config_invalid', `--broker-anonymous: an embedded broker without per-device identity listens on loopback only, not ${brokerHost}`, {
      details: { key: '--broker-anonymous' },
    });
  }
  // Plain HTTP or HTTPS (and which certificate): decided before any socket opens.
  const transport = decideHubTransport(host, resolve(options.dataDir ?? '.lookout-dev/hub'), options);
  // Likewise the embedded broker's: TLS beyond loopback, plain MQTT there only when asked.
  const brokerListeners =
    options.mqttUrl || options.bus ? undefined : decideBrokerListeners(brokerHost, resolve(options.dataDir ?? '.lookout-dev/hub'), transport, options);
  // Checked here so that a bad list stops start-up before any socket opens.
  const networks = options.deviceNetworks ? DeviceNetworks.parse(options.deviceNetworks) : undefined;
  // Stable across restarts (host and data dir, not the pid); its bus client id derives from it.
  const hubId =
    options.hubId ??
    `lookout-hub-${hostname()}-${createHash('sha256')
      .update(resolve(options.dataDir ?? '.lookout-dev/hub'))
      .digest('hex')
      .slice(0, 8)}`;
  const dataDir = resolve(options.dataDir ?? '.lookout-dev/hub');
  const cleanups: (() => Promise<unknown>)[] = [];
  const unwind = async () => {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => logger.warn({ err }, 'cleanup failed'));
  };

  try {
    const fleet = await loadFleetSecret(dataDir, options.fleetSecret ?? (process.env.LOOKOUT_FLEET_SECRET || undefined));
    if (fleet.source === 'created') logger.info({ path: fleet.path }, 'created the fleet secret (per-device bus passwords and tool tokens derive from it)');
    const busClientId = hubBusClientId(fleet.secret, hubId);
    let bus: BusPort;
    let brokerUrl: string;
    let brokerPort: number | undefined;
    let listening: RunningHub['brokerListeners'];
    /** Closes the ingest relay's sessions and its reading of the stream (hub replicas). */
    let stopRelay: (() => Promise<void>) | undefined;
    // Connected first: a replica that cannot reach its shared state at start stops rather than serve a fleet of its own.
    let redis: RedisConnection | undefined;
    if (options.stateUrl) {
      const connection = new RedisConnection({
        url: options.stateUrl,
        ...(options.statePrefix ? { prefix: options.statePrefix } : {}),
        logger: logger.child({ component: 'state' }),
      });
      redis = connection;
      cleanups.push(() => connection.close());
      await connection.ready().catch((err: unknown) => {
        throw new LookoutError('config_invalid', `--state: ${(err as Error).message}`, { details: { key: '--state' } });
      });
    }
    let relay: IngestRelay | undefined;
    const mirrorIntervalMs = options.mirrorIntervalMs ?? DEFAULT_MIRROR_INTERVAL_MS;
    let busClientAddress: HubInfo['busClientAddress'];
    if (options.bus) {
      bus = options.bus;
      brokerUrl = 'in-process';
    } else {
      let url = options.mqttUrl;
      if (!url && brokerListeners) {
        const maxMessage = options.maxMessageBytes ?? 256 * 1024;
        const broker = await EmbeddedBroker.start({
          port: options.brokerPort ?? DEFAULT_BROKER_PORT,
          host: brokerListeners.plainHost,
          ...(brokerListeners.tls
            ? { tls: { ...brokerListeners.tls, ...(options.brokerTlsHandshakeTimeoutMs ? { handshakeTimeoutMs: options.brokerTlsHandshakeTimeoutMs } : {}) } }
            : {}),
          ...(options.anonymousBroker ? {} : { auth: { fleetSecret: fleet.secret } }),
          // Messages a little past the hub's limit still reach it, to be counted as oversized.
          maxPayloadBytes: Math.max(4 * maxMessage, 1024 * 1024),
          ...(options.brokerMaxConnections ? { maxConnections: options.brokerMaxConnections } : {}),
          ...(options.brokerMaxConnectionsPerAddress ? { maxConnectionsPerAddress: options.brokerMaxConnectionsPerAddress } : {}),
          ...(options.brokerConnectTimeoutMs ? { connectTimeoutMs: options.brokerConnectTimeoutMs } : {}),
          logger: logger.child({ component: 'broker' }),
        });
        cleanups.push(() => broker.close());
        busClientAddress = (clientId) => broker.remoteAddressOf(clientId);
        url = broker.url;
        brokerPort = broker.port;
        listening = {
          plain: { host: broker.host, port: broker.port },
          ...(broker.tls ? { tls: { host: broker.tls.host, port: broker.tls.port, url: broker.tls.url } } : {}),
        };
        if (brokerListeners.insecure) {
          logger.warn(
            { host: broker.host },
            `--insecure-mqtt: plain MQTT on ${broker.host}, beyond loopback: device passwords and every message cross the network in clear`,
          );
        }
      }
      const credentials = !options.mqttUrl && !options.anonymousBroker ? { username: HUB_BUS_USER, password: busPassword(fleet.secret, HUB_BUS_USER) } : {};
      if (!url) throw new LookoutError('internal', 'no broker url');
      // An external mqtts:// broker: --mqtt-ca, else Node's roots and the fleet CA (broker-trust.ts).
      const trust = options.mqttUrl && /^(mqtts|ssl|tls):/.test(url) ? await brokerTrust(options.mqttCa, hubTlsPaths(dataDir).caPath) : undefined;
      const mqtt = await MqttBus.connect({
        url,
        clientId: busClientId,
        ...credentials,
        ...(trust ? { tls: { ca: trust.ca } } : {}),
        logger: logger.child({ component: 'bus' }),
      });
      cleanups.push(() => mqtt.close());
      bus = mqtt;
      if (redis && options.mqttUrl) {
        const r = new IngestRelay({
          redis,
          mqttUrl: url,
          ...(trust ? { ca: trust.ca } : {}),
          clientId: `${busClientId}-ingest`,
          ...(options.mqttGroup ? { group: options.mqttGroup } : {}),
          ...(options.streamRetentionS ? { retentionMs: options.streamRetentionS * 1000 } : {}),
          mirrorIntervalMs,
          logger: logger.child({ component: 'ingest-relay' }),
        });
        relay = r;
        stopRelay = closeOnce(r);
        cleanups.push(stopRelay);
        bus = new DeviceTopicsBus(mqtt, r);
      } else if (mqtt.stats().protocolVersion === 5 && DirectIngest.speaks(url)) {
        const ingestLog = logger.child({ component: 'ingest' });
        const clientId = `${busClientId}-ingest`;
        const direct = new DirectIngest({ mqttUrl: url, ...credentials, ...(trust ? { ca: trust.ca } : {}), clientId, logger: ingestLog });
        try {
          await direct.start();
          cleanups.push(() => direct.close());
          bus = new DeviceTopicsBus(mqtt, direct);
          ingestLog.info({ clientId }, 'device topics taken on a session of their own');
        } catch (err) {
          // The bus connection was taken: a broker that refuses a second one (a connection limit, an ACL
          // by client id) or has no subscription identifiers still gets the hub, its device topics on
          // the bus connection as before.
          await direct.close();
          logger.warn({ err: (err as Error).message }, 'device topics stay on the bus connection: the broker refused the ingest its own session');
        }
      }
      brokerUrl = urlForLog(url).replace(/\/$/, '');
    }

    const metrics = new HubMetrics({ defaultMetrics: options.defaultMetrics ?? true });
    if (relay) {
      const replica = relay;
      metrics.setReplicaSource(replica.group, () => {
        const { stale, read_lag_ms } = replica.status();
        return { stale, readLagMs: read_lag_ms };
      });
    }
    const routes = new RouteRegistry();
    const info: HubInfo = {
      id: hubId,
      version: packageVersion(),
      startedAt: Date.now(),
      brokerUrl,
      embeddedBroker: !options.mqttUrl && !options.bus,
      tokenRequired: token !== undefined,
      ...(transport.scheme === 'https' ? { tlsCertPath: transport.certPath } : {}),
      bus,
      ...(busClientAddress ? { busClientAddress } : {}),
      ...(logRing ? { logs: logRing } : {}),
      ...(relay
        ? { freshen: (deviceId?: string) => relay?.freshen(deviceId), follow: (deviceId?: string) => relay?.follow(deviceId) ?? (() => undefined) }
        : {}),
      ...(relay && mirrorIntervalMs > 0 ? { dividedApply: dividedApplyOf(relay) } : {}),
      sharedState: () => {
        if (!redis) return { backend: 'memory', replica: false, stale: false, stale_since: null };
        if (relay) {
          const { stale, stale_since, ...details } = relay.status();
          return { backend: 'redis', replica: true, stale, stale_since, details };
        }
        const since = redis.unreachableSince;
        return { backend: 'redis', replica: false, stale: !redis.up, stale_since: since === undefined ? null : new Date(since).toISOString() };
      },
    };

    // Registered before the plugins' stop, so it runs after it: what they changed last is written.
    let state: HubStateStore & { close?(): Promise<void> };
    if (options.stateStore) state = options.stateStore;
    else if (redis) {
      const store = new RedisStateStore(redis, { logger: logger.child({ component: 'state' }) });
      if (relay) {
        const r = relay;
        // The saved latest cache carries the stream point it reflects, saved by each replica: a restarted replica resumes
        // reading exactly where its own was (the bus cache loads it before its first subscription starts the reading).
        store.trackCursor(BUS_CACHE_STATE_KEY, {
          member: r.memberId,
          point: () => r.resumePoint(),
          resume: (point) => r.resumeFrom(point),
          replayable: (cursor) => r.replayable(cursor),
          onMoved: (changed) => r.onPointMoved(changed),
        });
      }
      state = store;
    } else state = new FileStateStore({ dir: join(dataDir, 'state'), logger: logger.child({ component: 'state' }) });
    cleanups.push(async () => {
      await state.close?.();
    });

    const shared = options.sharedState ?? (redis ? new RedisSharedState(redis) : new MemorySharedState());
    if (shared instanceof RedisSharedState) cleanups.push(() => Promise.resolve(shared.close()));

    const set = options.plugins ? { plugins: options.plugins, essential: options.essential ?? [] } : await loadHubPluginSet(options.pluginSet);
    const plugins = set.plugins;
    // Plugins that derive per-device credentials (the tool tokens) read the fleet secret as a config key.
    const env: Record<string, string | undefined> = {
      ...process.env,
      LOOKOUT_FLEET_SECRET: fleet.secret,
      ...pluginEnv(options, networks),
      ...(options.env ?? {}),
    };
    const runtime = await loadPlugins({
      plugins,
      runtime: { kind: 'hub', id: hubId, dataDir },
      bus,
      env,
      envSource: 'the hub options and environment',
      logger,
      routes,
      container: rootContainer.createChildContainer(),
      essential: set.essential,
      hostServices: [
        { token: HUB_METRICS, value: metrics },
        {
          token: HUB_ROUTES,
          value: {
            list: () => routes.list(),
            errorCodes: () => errorTable(plugins.map((p) => p.name)),
            pluginDescriptions: () => Object.fromEntries(plugins.map((p) => [p.name, p.description])),
          },
        },
        { token: HUB_INFO, value: info },
        { token: HUB_STATE, value: state },
        { token: HUB_SHARED, value: shared },
      ],
    });
    info.plugins = () => runtime.plugins.map((p) => ({ ...p }));
    // Every handler subscribed and the bus cache restored with the stream point saved with it: a
    // replica applies the shared stream from there on (messages taken meanwhile wait in it).
    relay?.startReading();
    cleanups.push(async () => {
      await runtime.stop();
    });
    // A hub replica's ingest stops before the plugins do: the device topics are no longer taken (what
    // its sessions had not acknowledged stays in them) nor read, so the bus cache's last save holds
    // every message read and the stream point saved with it is the last one applied, not one read
    // after the cache's handlers ended. (The direct ingest stays until the plugins have ended their
    // subscriptions, so that its session queues nothing for a hub that is gone.)
    if (stopRelay) cleanups.push(stopRelay);

    const app = createHubApp({
      routes: routes.list(),
      metrics,
      logger,
      bodyLimitBytes: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
      ...(token ? { token } : {}),
      // The media plugin signs clip URLs under the same key (derived from the fleet secret it reads).
      urlKey: signedUrlKey(fleet.secret),
      ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
      ...(options.hostNames ? { hostNames: options.hostNames } : {}),
      loopback: isLoopbackHost(host),
    });
    const handle = app.callback(); // Koa answers every failure itself: the returned promise never rejects
    const web = await startHubServer({ handler: (req, res) => void handle(req, res), transport, host, port: options.port ?? DEFAULT_HUB_PORT, logger });
    cleanups.push(() => web.close());
    const port = web.port;
    const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    const url = `${web.scheme}://${urlHost}:${port}`;
    info.httpUrl = url;
    logger.info(
      { url, host, broker: brokerUrl, plugins: runtime.plugins.map((p) => p.name), auth: token ? 'bearer token' : 'none (loopback only)' },
      'hub listening',
    );
    if (transport.scheme === 'http' && transport.insecure) {
      logger.warn({ host }, `--insecure-http: plain HTTP on ${host}, beyond loopback: the bearer token and every answer cross the network in clear`);
    }
    if (!token) logger.warn('no --token: the hub and its broker listen on 127.0.0.1 only, and HTTP asks no credentials (bus clients still authenticate)');

    let closing: Promise<void> | undefined;
    return {
      url,
      port,
      host,
      brokerUrl,
      ...(brokerPort !== undefined ? { brokerPort } : {}),
      ...(listening ? { brokerListeners: listening } : {}),
      tokenRequired: token !== undefined,
      runtime,
      metrics,
      deviceCredentials: (deviceId) => deviceBusCredentials(fleet.secret, deviceId),
      close: () => (closing ??= unwind()),
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}

function dividedApplyOf(relay: IngestRelay): DividedApply {
  return {
    publish: (channel, value) => relay.publishRecord(channel, value),
    onRecord: (channel, listener) => relay.onRecord(channel, listener),
  };
}

/** `close` run once, however often it is called (before the plugins stop, and again in the unwind). */
function closeOnce(c: { close(): Promise<void> }): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= c.close());
}

/** Option shortcuts as the plugin config keys the hub plugins declare. */
function pluginEnv(o: HubOptions, networks: DeviceNetworks | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  if (o.staleSec !== undefined) env.LOOKOUT_HUB_STALE_SEC = String(o.staleSec);
  if (o.maxMessageBytes !== undefined) env.LOOKOUT_HUB_MAX_MESSAGE_BYTES = String(o.maxMessageBytes);
  if (o.ringSize !== undefined) env.LOOKOUT_HUB_RING_SIZE = String(o.ringSize);
  if (o.ringMaxBytes !== undefined) env.LOOKOUT_HUB_RING_MAX_BYTES = String(o.ringMaxBytes);
  if (o.toolTimeoutMs !== undefined) env.LOOKOUT_HUB_TOOL_TIMEOUT_MS = String(o.toolTimeoutMs);
  if (o.registryFile !== undefined) env.LOOKOUT_HUB_REGISTRY = resolve(o.registryFile);
  if (o.builderUrl !== undefined) env.LOOKOUT_BUILDER_URL = o.builderUrl;
  if (networks) env.LOOKOUT_HUB_DEVICE_NETWORKS = networks.cidrs.join(',');
  return env;
}
