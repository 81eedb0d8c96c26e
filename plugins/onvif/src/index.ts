import { hostname } from 'node:os';
import { definePlugin, devicePath, deviceInfo, surfacePort, toLookoutError } from 'lookout/core';
import { isLoopbackHost } from 'lookout/lib/net';
import { CameraProfileToken } from '../../camera-profile/src/service.js';
import { DetectionPipelineToken } from '../../detector/src/service.js';
import { EncodedVideoToken } from '../../encode/src/service.js';
import { DeviceIdentityToken } from '../../identity/src/service.js';
import { RtspServiceToken } from '../../rtsp/src/service.js';
import { OnvifAuth } from './auth/onvif-auth.js';
import { OnvifConfigSchema } from './config.js';
import { consumerPolicy } from './events/notify-delivery.js';
import { OnvifEvents } from './events/onvif-events.js';
import { startOnvifHttps } from './http/https-listener.js';
import { OnvifServer, type OnvifServerOptions } from './http/onvif-server.js';
import { Snapshot } from './http/snapshot.js';
import { encoderState, mediaProfiles, VIDEO_SOURCE_CONFIG_TOKEN } from './media/media-model.js';
import { DeviceStore } from './device/device-store.js';
import { endpointAddress } from './device/endpoint-address.js';
import { isFixedScope, onvifScopes } from './scopes.js';
import { OnvifServiceToken, OnvifStatsToken, type OnvifService, type OnvifStats, type OnvifStatsService } from './service.js';
import { baseUrl, PATHS, type OnvifSurface } from './surface.js';

/** The device port clients expect ONVIF on; a simulated device takes a free one. */
export const DEFAULT_ONVIF_PORT = 80;
/** Users, configurable scopes, NTP and time zone set by ONVIF clients (mode 0600: it holds passwords). */
export const ONVIF_DEVICE_PATH = '/data/config/onvif_device.json';

/** The device port clients expect ONVIF over HTTPS on. */
export const DEFAULT_ONVIF_HTTPS_PORT = 443;

/** Where the RTSP server listens when the rtsp plugin does not say (its default). */
export const DEFAULT_RTSP_PORT = 8554;

/**
 * The ONVIF device surface (Profile S and T): SOAP 1.2 Device, Media (ver10), Media2 (ver20) and
 * Events services and a JPEG snapshot, so that Home Assistant, go2rtc, Frigate, UniFi Protect or
 * ONVIF Device Manager adopt the camera. Media describes the one encoder's stream and writes the
 * camera profile; the stream itself is the rtsp plugin's.
 */
export default definePlugin({
  name: 'onvif',
  version: '1.0.0',
  core: '^1',
  description: 'ONVIF device surface: SOAP Device, Media, Media2 and Events services, snapshot; WS-Security and HTTP Digest',
  layer: 'layer0',
  requires: [DeviceIdentityToken, CameraProfileToken, EncodedVideoToken],
  optionalRequires: [RtspServiceToken, DetectionPipelineToken],
  provides: [OnvifServiceToken, OnvifStatsToken],
  config: OnvifConfigSchema,
  async start(ctx) {
    const { config, log, runtime } = ctx;
    const identity = ctx.services.get(DeviceIdentityToken);
    const cameraProfile = ctx.services.get(CameraProfileToken);
    const video = ctx.services.get(EncodedVideoToken);
    const info = deviceInfo(runtime);
    const model = runtime.image ?? info.roles[0] ?? 'camera';
    const defaultScopes = onvifScopes({ name: `Lookout ${identity.deviceId}`, hardware: model, location: info.labels[0] });
    const fixedScopes = defaultScopes.filter(isFixedScope);
    const store = new DeviceStore(devicePath(runtime.dataDir, ONVIF_DEVICE_PATH), { name: config.ONVIF_USER, password: config.ONVIF_PASSWORD });
    const scopes = (): string[] => [...fixedScopes, ...store.scopes(defaultScopes.filter((s) => !isFixedScope(s)))];
    let port = 0;
    // Set once HTTPS listens (later in start): the closures below read it then.
    let httpsPort: number | undefined = undefined;
    // The server's counters once it exists (one-shot mode never starts one).
    let serverStats = (): OnvifStats => ({ parsedBodies: 0, refusedUnread: 0, refusedConnections: 0, connections: 0 });
    const service: OnvifService = {
      get port() {
        return port;
      },
      // WS-Discovery's XAddrs is a list: both, as cameras offering HTTPS announce them.
      xaddr: (host) => `http://${host}:${port}${PATHS.device}${httpsPort !== undefined ? ` https://${host}:${httpsPort}${PATHS.device}` : ''}`,
      get scopes() {
        return scopes();
      },
    };
    const stats: OnvifStatsService = { stats: () => serverStats() };

    if (info.oneShot) {
      ctx.services.provide(OnvifServiceToken, service);
      ctx.services.provide(OnvifStatsToken, stats);
      ctx.health.set('ok', 'one-shot mode: the ONVIF server does not run');
      return;
    }

    await store.load();
    let host = info.listenHost;
    let note: string | undefined;
    if (config.ONVIF_PASSWORD === undefined && !isLoopbackHost(host)) {
      // The tool server's rule: nothing beyond loopback without a credential.
      note = `no ONVIF_PASSWORD: ONVIF listens on 127.0.0.1 only, not on ${host}`;
      log.error(note);
      host = '127.0.0.1';
    }

    // Set per request before the events service runs (synchronously): a subscription's address uses the host the client reached.
    let requestBase = `http://${host}:${port}`;
    const events = new OnvifEvents({
      now: () => Date.now(),
      maxSubscriptions: config.ONVIF_MAX_SUBSCRIPTIONS,
      maxSubscriptionsPerClient: config.ONVIF_MAX_SUBSCRIPTIONS_PER_CLIENT,
      subscriptionUrl: (id) => `${requestBase}${PATHS.subscription}${id}`,
      log,
      sourceToken: VIDEO_SOURCE_CONFIG_TOKEN,
      consumerAllowed: consumerPolicy(config.ONVIF_NOTIFY_NETWORKS),
      delivery: { retries: config.ONVIF_NOTIFY_RETRIES, retryDelayMs: config.ONVIF_NOTIFY_RETRY_DELAY_MS, timeoutMs: config.ONVIF_NOTIFY_TIMEOUT_MS },
    });
    ctx.onStop(() => events.close());
    const offDetections = ctx.services.optional(DetectionPipelineToken)?.onResult((dets, frame) => events.onDetections(dets, frame.timestampMs));
    if (offDetections) ctx.onStop(offDetections);

    const surface: OnvifSurface = {
      port: () => port,
      httpsPort: () => httpsPort,
      profiles: () => mediaProfiles(ctx.services.optional(RtspServiceToken)),
      encoder: () => encoderState(cameraProfile.get(), video),
      cameraProfile,
      // Without the rtsp plugin: the port asked for, else the device's (a free port under sim is only known to that plugin).
      rtspPort: () => ctx.services.optional(RtspServiceToken)?.port ?? info.requestedPorts.rtsp ?? DEFAULT_RTSP_PORT,
      information: () => {
        const fingerprint = identity.fingerprint();
        return {
          manufacturer: 'Lookout',
          model,
          firmwareVersion: info.runtimeVersion,
          serialNumber: identity.serial,
          // GetDeviceInformation has no field of its own for it: the certificate fingerprint rides in HardwareId.
          hardwareId: fingerprint ? `${identity.deviceId} sha256:${fingerprint}` : identity.deviceId,
        };
      },
      scopes,
      fixedScopes: () => fixedScopes,
      hostname: () => hostname(),
      store,
      endpointReference: endpointAddress(runtime.id),
      serial: identity.serial,
      configurationChanged: (token, type) => events.configurationChanged(token, type),
      now: () => Date.now(),
    };
    const auth = new OnvifAuth({
      required: config.ONVIF_PASSWORD !== undefined,
      lookup: (user) => store.lookup(user),
      skewMs: config.ONVIF_CLOCK_SKEW_S * 1000,
      maxNonces: config.ONVIF_NONCE_CACHE,
      tokenRepeatMs: config.ONVIF_TOKEN_REPEAT_MS,
      now: () => Date.now(),
    });
    const snapshot = new Snapshot(video, {
      concurrency: config.ONVIF_SNAPSHOT_CONCURRENCY,
      maxWaiting: config.ONVIF_SNAPSHOT_QUEUE,
      timeoutMs: config.ONVIF_SNAPSHOT_TIMEOUT_MS,
    });
    const serverOptions: Omit<OnvifServerOptions, 'port'> = {
      host,
      surface,
      auth,
      snapshot,
      events: {
        handle: (action, body, path, signal, request) => {
          requestBase = baseUrl(surface, request);
          return events.handle(action, body, path, signal, request.client);
        },
      },
      maxBodyBytes: config.ONVIF_MAX_BODY_BYTES,
      preAuth: {
        maxBodyBytes: config.ONVIF_PREAUTH_BODY_BYTES,
        maxElements: config.ONVIF_PREAUTH_MAX_ELEMENTS,
        bodyTimeoutMs: config.ONVIF_PREAUTH_BODY_TIMEOUT_MS,
      },
      requestTimeoutMs: config.ONVIF_REQUEST_TIMEOUT_MS,
      headersTimeoutMs: config.ONVIF_HEADERS_TIMEOUT_MS,
      connections: { perAddress: config.ONVIF_MAX_CONNECTIONS_PER_ADDRESS, total: config.ONVIF_MAX_CONNECTIONS },
      log,
    };
    const server = new OnvifServer({ ...serverOptions, port: surfacePort(runtime, 'onvif', DEFAULT_ONVIF_PORT) });
    try {
      port = await server.listen();
    } catch (err) {
      events.close();
      throw toLookoutError(err);
    }
    serverStats = () => server.stats();
    ctx.onStop(() => server.close());
    ctx.ports.announce('onvif', port);

    httpsPort = await startOnvifHttps(ctx, {
      mode: config.ONVIF_HTTPS,
      port: config.ONVIF_HTTPS_PORT ?? surfacePort(runtime, 'onvif_https', DEFAULT_ONVIF_HTTPS_PORT),
      certPath: identity.certPath,
      keyPath: identity.keyPath,
      server: serverOptions,
    });
    if (httpsPort !== undefined) ctx.ports.announce('onvif_https', httpsPort);
    ctx.services.provide(OnvifServiceToken, service);
    ctx.services.provide(OnvifStatsToken, stats);
    const access = auth.required ? `WS-Security UsernameToken or HTTP Digest as ${config.ONVIF_USER}` : 'no credentials (ONVIF_PASSWORD unset): loopback only';
    if (note) ctx.health.set('degraded', note);
    else ctx.health.set('ok', `ONVIF on ${host}:${port}, ${access}`);
    log.info({ host, port, ...(httpsPort !== undefined ? { https_port: httpsPort } : {}), path: PATHS.device, access }, 'ONVIF listening');
  },
});

export { OnvifServiceToken, OnvifStatsToken, type OnvifService, type OnvifStatsService, type OnvifStats } from './service.js';
