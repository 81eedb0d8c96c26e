import {
  type BusPort,
  loadImage,
  LAYER_KEY,
  selectLayer,
  unknownEnvKeys,
  createLogger,
  loadPlugins,
  type LoadedRuntime,
  declaredKeys,
  ToolRegistry,
  type RestartPolicy,
} from 'lookout/core/host';
import { MqttBus, type MqttBusOptions, Outbox, type OutboxOptions, OutboxBus, type BusHealth, urlForLog } from 'lookout/lib/mqtt';
import {
  devicePath,
  LookoutError,
  toLookoutError,
  type Logger,
  type Plugin,
  type RuntimeInfo,
  CORE_VERSION,
  type LayerId,
  packageVersion,
  type PluginReport,
  type PluginRestart,
  LastWillToken,
  type LastWill,
} from 'lookout/core';
import { DeviceIdSchema } from 'lookout/core/contracts';
import { automationHook } from './automation-hook.js';
import { DEFAULT_TOOL_HOST, DEFAULT_TOOL_PORT, checkCredential, startToolServer, type ToolServer } from './tool-server.js';
import { decideToolTransport, type ToolTlsOptions } from './tool-transport.js';
import { startCommandDispatcher, type CommandDispatcher, type CommandStats } from './command-dispatcher.js';
import { LateBus } from './late-bus.js';
import { DeviceMetrics } from './device-metrics.js';
import { declareHostTools, registerHostTools } from './host-tools.js';
import { RecordingFilesToken } from 'lookout/lib/storage';

export const DEFAULT_MQTT_URL = 'mqtt://127.0.0.1:1883';
/** The outbox of QoS 1 messages waiting for the broker, under the data root. */
export const OUTBOX_PATH = '/data/outbox';

/** An image already in memory (tests, embedders) instead of a name or file. */
export interface ImageSpec {
  name: string;
  role?: string;
  plugins: Plugin[];
  /** Plugins whose failure stops the device. */
  essential?: string[];
}

export interface DeviceOptions {
  deviceId: string;
  /** `camera`, `precision`, a path to an image file, or an image in memory. Default `camera`. */
  image?: string | ImageSpec;
  /** A layer alias (`layer2`, `layer4_thermal`, `full`…). Exclusive with layerEnvPath. */
  layer?: string;
  /** An env file naming its layer in EDGE_V3_LAYER. */
  layerEnvPath?: string;
  /** Root of the spec's device paths: `/` on a device, a folder in development. */
  dataDir: string;
  /** Broker URL (credentials in it are honoured, never logged). Default mqtt://127.0.0.1:1883. */
  mqttUrl?: string;
  mqttUsername?: string;
  mqttPassword?: string;
  /** Extra MqttBus settings (reconnect backoff, keep-alive, timeouts), mainly for tests. The device never gives up connecting. */
  mqttOptions?: Partial<Omit<MqttBusOptions, 'url' | 'clientId' | 'will' | 'username' | 'password' | 'connectTimeoutMs'>>;
  /** Bounds and flush period of the outbox (`<dataDir>/data/outbox`) that holds QoS 1 messages while the broker is away. */
  outbox?: Pick<OutboxOptions, 'maxMessages' | 'maxBytes' | 'flushMs'>;
  /**
   * How long start waits for the broker before it resolves without it (the device joins whenever
   * it answers). Default 5 000: with the broker there, a started device is on the bus, subscribed.
   */
  busWaitMs?: number;
  /** A bus to use instead of MQTT (MemoryBus in tests and the one-shot modes); not closed at stop. */
  bus?: BusPort;
  /** false: no tool server (one-shot modes). Default true. */
  toolServer?: boolean;
  /** Default 8765; 0 picks a free port. */
  toolPort?: number;
  /** Default 127.0.0.1; anything else needs `toolToken`. */
  toolHost?: string;
  /** Bearer token of the tool server for callers beyond loopback (edge/src/tool-credential.ts); never logged. */
  toolToken?: string;
  /** Browser origins allowed to call the tool server; none by default. */
  toolAllowedOrigins?: readonly string[];
  /**
   * HTTPS with the device certificate: the default beyond loopback (`tls` asks for it on loopback
   * too), `insecureHttp` allows plain HTTP there (edge/src/tool-transport.ts).
   */
  toolTls?: ToolTlsOptions;
  /** The role label (camera_id); default the image's role. */
  role?: string;
  source?: 'sim';
  /** Ports asked for other surfaces (onvif, rtsp, mesh, sidecar, ws_discovery). */
  ports?: Record<string, number>;
  /** Overrides of the layer env (e.g. process.env); only keys some plugin of the image declares are taken. */
  env?: Record<string, string | undefined>;
  logger?: Logger;
  startTimeoutMs?: number;
  /** Backoff between restarts of a failing plugin (tests shorten it). */
  restart?: Partial<RestartPolicy>;
  /** The one-shot agent modes: plugins are told nothing listens and no bus is real. */
  oneShot?: boolean;
}

export interface DeviceHandle {
  readonly id: string;
  readonly image: string;
  readonly layer: LayerId;
  readonly role: string;
  readonly dataDir: string;
  /** Where the layer env came from. */
  readonly envSource: string;
  /** Listening ports by surface (tools, and whatever plugins announced). */
  readonly ports: Record<string, number>;
  /** `http://host:port/mcp`, absent without a tool server. */
  readonly toolUrl?: string;
  readonly tools: ToolRegistry;
  readonly bus: BusPort;
  /** The broker link and the outbox, null on a bus given by the caller. */
  busHealth(): BusHealth | null;
  /** Layer env keys no plugin declares, with the nearest declared key. */
  readonly unknownKeys: { key: string; hint?: string }[];
  plugins(): PluginReport[];
  commands(): CommandStats;
  /** Offline status, plugins stopped in reverse, bus closed, tool server closed. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Assembles a device: image and layer, tool server, plugins, then the bus (so the last-will carries
 * the status plugin's message and nothing is announced before every tool is ready), then the
 * command ingress. A failure at any step releases what the steps before it opened.
 */
export async function startDevice(options: DeviceOptions): Promise<DeviceHandle> {
  const logger = options.logger ?? createLogger({ name: 'lookout-edge' });
  const idCheck = DeviceIdSchema.safeParse(options.deviceId);
  if (!idCheck.success) {
    throw new LookoutError('config_invalid', `--device-id ${JSON.stringify(options.deviceId)} is invalid: ${idCheck.error.issues[0]?.message}`, {
      details: { key: '--device-id' },
    });
  }
  const deviceId = idCheck.data;
  const log = logger.child({ device: deviceId });

  const image = typeof options.image === 'object' ? options.image : await loadImage(options.image ?? 'camera');
  const selected = await selectLayer({
    ...(options.layer ? { layer: options.layer } : {}),
    ...(options.layerEnvPath ? { layerEnvPath: options.layerEnvPath } : {}),
    dataDir: options.dataDir,
  });
  const declared = declaredKeys(image.plugins.map((p) => p.config));
  const unknownKeys = unknownEnvKeys(selected.env, declared, [LAYER_KEY]);
  for (const { key, hint } of unknownKeys) {
    log.warn(
      { env_key: key, source: selected.source, ...(hint ? { hint } : {}) },
      `${key} in ${selected.source} is not declared by any plugin of the image${hint ? `; did you mean ${hint}?` : ''}`,
    );
  }
  const env: Record<string, string | undefined> = { ...selected.env };
  for (const [k, v] of Object.entries(options.env ?? {})) if (declared.has(k) && v !== undefined) env[k] = v;

  const roles = [image.role ?? image.name];
  const role = options.role ?? roles[0];
  const tools = new ToolRegistry();
  const runtimeVersion = packageVersion();
  let toolServer: ToolServer | undefined;
  let loaded: LoadedRuntime | undefined;
  const late = new LateBus();
  // The tool server's /metrics: what this device publishes, its recorder, its plugins.
  const metrics = new DeviceMetrics({ deviceId, tools, connected: () => late.connected, plugins: () => loaded?.plugins ?? [] });
  if (options.toolServer !== false) {
    // The missing credential first: it is the graver omission, and its refusal names what to set.
    checkCredential(options.toolHost ?? DEFAULT_TOOL_HOST, options.toolToken);
    const transport = decideToolTransport(options.toolHost ?? DEFAULT_TOOL_HOST, options.dataDir, deviceId, options.toolTls ?? {});
    toolServer = await startToolServer({
      ...(transport.scheme === 'https' ? { tls: { certPath: transport.certPath, keyPath: transport.keyPath } } : { insecure: transport.insecure }),
      tools,
      logger: log.child({ component: 'tool-server' }),
      port: options.toolPort ?? DEFAULT_TOOL_PORT,
      host: options.toolHost ?? DEFAULT_TOOL_HOST,
      ...(options.toolToken !== undefined ? { token: options.toolToken } : {}),
      ...(options.toolAllowedOrigins ? { allowedOrigins: options.toolAllowedOrigins } : {}),
      serverInfo: { name: `lookout-device ${deviceId}`, version: runtimeVersion },
      metrics: () => metrics.text(),
      // The recorder's chunks for the hub's playback, with the device's token instead of SSH.
      recordings: () => loaded?.service(RecordingFilesToken),
    });
  }

  let outboxBus: OutboxBus | undefined;
  // Plugins subscribe while they start, before the loader (and its onChange) exists.
  const pluginListeners = new Set<(p: PluginReport) => void>();
  const restartListeners = new Set<(r: PluginRestart) => void>();
  const automation = automationHook(log.child({ component: 'automation' }));
  const reportPlugins = (): PluginReport[] => (loaded ? loaded.plugins.map((p) => ({ ...p })) : []);
  const runtime: RuntimeInfo = {
    kind: 'device',
    id: deviceId,
    dataDir: options.dataDir,
    layer: selected.layer,
    image: image.name,
    role,
    device: {
      roles,
      labels: [role],
      ...(options.source ? { source: options.source } : {}),
      runtimeVersion,
      coreVersion: CORE_VERSION,
      requestedPorts: options.ports ?? {},
      listenHost: options.toolHost ?? DEFAULT_TOOL_HOST,
      tlsSurfaces: toolServer?.scheme === 'https' ? ['tools'] : [],
      oneShot: options.oneShot ?? false,
      bus: () => outboxBus?.health() ?? null,
      plugins: reportPlugins,
      disabled: () => loaded?.disabled ?? [],
      onPluginChange: (listener) => {
        pluginListeners.add(listener);
        return () => pluginListeners.delete(listener);
      },
      onPluginRestart: (listener) => {
        restartListeners.add(listener);
        return () => restartListeners.delete(listener);
      },
      reportAutomation: (entry) => automation.report(entry),
      onAutomation: (listener) => automation.listen(listener),
    },
  };

  declareHostTools(tools);
  try {
    loaded = await loadPlugins({
      plugins: image.plugins,
      runtime,
      bus: metrics.observe(late),
      env,
      envSource: selected.source,
      logger: log,
      tools,
      ports: toolServer ? { tools: toolServer.port } : {},
      essential: image.essential ?? [],
      ...(options.startTimeoutMs ? { startTimeoutMs: options.startTimeoutMs } : {}),
      ...(options.restart ? { restart: options.restart } : {}),
    });
    registerHostTools(tools, loaded);
    loaded.onChange((p) => {
      log.info({ plugin: p.name, state: p.state, code: p.code }, `plugin ${p.name} is ${p.state}${p.message ? `: ${p.message}` : ''}`);
      for (const listener of pluginListeners) listener(p);
    });
    loaded.onRestart((r) => {
      for (const listener of restartListeners) listener(r);
    });
  } catch (err) {
    await toolServer?.close();
    throw err;
  }

  let dispatcher: CommandDispatcher | undefined;
  let ownedBus: MqttBus | undefined;
  try {
    // Subscribed on the late bus, so commands queued in a persistent session find it at connect.
    // Commands a plugin subscribes to itself (the recorder's cmd/data_manifest) are the plugin's to answer.
    const pluginCommands = new Set(
      image.plugins.flatMap((p) => (p.subscriptions ?? []).filter((t) => /^cmd\/[^/#+]+$/.test(t)).map((t) => t.slice('cmd/'.length))),
    );
    dispatcher = await startCommandDispatcher({ bus: late, deviceId, tools, pluginCommands, logger: log.child({ component: 'commands' }) });
    if (options.bus) {
      await late.attach(options.bus);
    } else {
      const will = lastWill(loaded, deviceId, log);
      const url = options.mqttUrl ?? DEFAULT_MQTT_URL;
      const busLog = log.child({ component: 'bus' });
      const outbox = await Outbox.open({ ...options.outbox, dir: devicePath(options.dataDir, OUTBOX_PATH), logger: busLog });
      ownedBus = MqttBus.create({
        ...options.mqttOptions,
        url,
        clientId: deviceId,
        clean: false,
        // A camera boots before its network and hub do: it works without the broker and joins when it appears.
        connectTimeoutMs: Infinity,
        ...(options.mqttUsername !== undefined ? { username: options.mqttUsername } : {}),
        ...(options.mqttPassword !== undefined ? { password: options.mqttPassword } : {}),
        ...(will ? { will } : {}),
        logger: busLog,
      });
      outboxBus = new OutboxBus(ownedBus, outbox, { logger: busLog });
      // Subscriptions are acknowledged, and hello and status sent, whenever the broker answers;
      // start waits for that a little only, so that a device on a working bus is ready subscribed.
      const attached = late.attach(outboxBus).then(
        () => true,
        (err: unknown) => {
          if (toLookoutError(err).code !== 'bus_closed') log.error({ err }, 'a subscription was not made');
          return false;
        },
      );
      // What plugins published while they started goes first, before anything published from now on.
      await late.flush();
      ownedBus.start().then(
        () => log.info('joined the bus'),
        () => undefined, // only at close
      );
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), options.busWaitMs ?? 5_000)));
      const joined = await Promise.race([attached, waited]);
      clearTimeout(timer);
      if (!joined) log.warn({ url: urlForLog(url) }, 'the broker is not reachable: the device works without it and joins when it answers');
    }
    await late.flush();
  } catch (err) {
    await dispatcher?.stop().catch(() => undefined);
    await loaded.stop();
    await late.close().catch(() => undefined);
    await toolServer?.close();
    throw err;
  }

  log.info(
    {
      image: image.name,
      layer: selected.layer,
      envSource: selected.source,
      ports: loaded.ports,
      bus: options.bus ? 'in-process' : urlForLog(options.mqttUrl ?? DEFAULT_MQTT_URL),
      busState: late.connected ? 'connected' : 'down',
      plugins: loaded.plugins.map((p) => p.name),
      disabled: loaded.disabled.map((d) => d.name),
    },
    'device ready',
  );

  let stopping: Promise<void> | undefined;
  const handle: DeviceHandle = {
    id: deviceId,
    image: image.name,
    layer: selected.layer,
    role,
    dataDir: options.dataDir,
    envSource: selected.source,
    get ports() {
      return { ...loaded.ports };
    },
    ...(toolServer ? { toolUrl: toolServer.url } : {}),
    tools,
    bus: late,
    busHealth: () => outboxBus?.health() ?? null,
    unknownKeys,
    plugins: reportPlugins,
    commands: () => dispatcher.stats(),
    stop() {
      stopping ??= (async () => {
        log.info('device stopping');
        await dispatcher.stop().catch((err: unknown) => log.warn({ code: toLookoutError(err).code }, 'command ingress did not stop cleanly'));
        await loaded.stop();
        // Our own MQTT connection ends with a DISCONNECT, so the broker drops the will: the status
        // plugin already said offline. A bus given by the caller stays theirs.
        if (ownedBus) await late.close();
        await toolServer?.close();
        log.info('device stopped');
      })();
      return stopping;
    },
  };
  return handle;
}

/** The will from the plugin that provides it (status), as of now; none when no plugin does. */
function lastWill(loaded: LoadedRuntime, deviceId: string, log: Logger): MqttBusOptions['will'] {
  const will = loaded.service<LastWill>(LastWillToken);
  if (!will) {
    log.warn('no plugin provides a last-will: a crash of this device will not show as offline');
    return undefined;
  }
  return { topic: `devices/${deviceId}/${will.suffix}`, payload: JSON.stringify(will.payload()), qos: will.qos, retain: will.retain };
}
