import { definePlugin, deviceInfo, surfacePort, toLookoutError, z } from 'lookout/core';
import { isLoopbackHost } from 'lookout/lib/net';
import { reloadOnSighup, servedPairAtStart, type ServedPair } from 'lookout/lib/tls';
import { EncodedVideoToken } from '../../encode/src/service.js';
import { RtspConfigSchema } from './config.js';
import { DigestAuth } from './digest-auth.js';
import { liveStatus, type LiveStatusSources } from './live-status.js';
import { RtspServer, type RtspsOptions } from './rtsp-server.js';
import { decideRtspsTransport } from './rtsps-transport.js';
import { LiveStatusResultSchema, RtspServiceToken, type RtspService } from './service.js';
import { StreamSource } from './stream-source.js';

/** The RTSP port cameras use; a simulated device takes a free one. */
export const DEFAULT_RTSP_PORT = 8554;
/** RTSPS's registered port; a simulated device takes a free one. */
export const DEFAULT_RTSPS_PORT = 322;
export const H265_PATH = '/preview';
export const H264_PATH = '/preview_h264';

/**
 * The RTSP preview (layer 0): the device's one encode served to video software, /preview as H.265
 * (RFC 7798) and /preview_h264 as H.264 (RFC 6184) from the same encoder run's second output, over
 * TCP (interleaved) or UDP, with Digest sign-in when ONVIF_PASSWORD is set. Viewers never cost a
 * second encode, and a slow one is dropped instead of holding up the others or the recorder.
 * RTSPS (RTSPS=auto|on|off) serves the same beside it over TLS with the device certificate; plain
 * RTSP stays for the video software that speaks no RTSPS (and for the hub's live MP4, for now).
 */
export default definePlugin({
  name: 'rtsp',
  version: '1.0.0',
  core: '^1',
  description: 'RTSP preview server: /preview (H.265) and /preview_h264 (H.264) from the one encoder, TCP and UDP, Digest auth',
  layer: 'layer0',
  requires: [EncodedVideoToken],
  provides: [RtspServiceToken],
  config: RtspConfigSchema,
  tools: [
    {
      name: 'get_live_status',
      readOnly: true,
      idempotent: true,
      description:
        'The live stream now: up or not, codec, H.264 offered, size, fps, GOP, RTSP viewers and sessions by transport, the newest keyframe’s time, the RTSP port and paths, the encoder’s counters',
      input: z.object({}),
      output: LiveStatusResultSchema,
    },
  ],
  async start(ctx) {
    const { config, log, runtime } = ctx;
    const video = ctx.services.get(EncodedVideoToken);
    const info = deviceInfo(runtime);
    let lastKeyframe: string | null = null;
    // Until the server listens (and in the one-shot modes, where it never does): no viewers, no port.
    const status: LiveStatusSources = { video, server: null, paths: { h265: H265_PATH, h264: null }, lastKeyframeAt: () => lastKeyframe };
    ctx.tools.register('get_live_status', () => liveStatus(status));
    if (info.oneShot) {
      ctx.health.set('ok', 'one-shot mode: the RTSP server does not run');
      return;
    }

    const offKeyframes = video.subscribe((p) => {
      if (p.keyframe) lastKeyframe = new Date(p.capturedAtMs).toISOString();
    });
    ctx.onStop(offKeyframes);

    const sources = [new StreamSource(H265_PATH, 'h265', video, config.RTSP_MAX_PAYLOAD_BYTES)];
    // Asking for H.264 turns on the encoder's second output (one ffmpeg run, two encodes of the same frames).
    const h264 = config.RTSP_H264 === 'on' ? (video.h264?.() ?? null) : null;
    if (h264) sources.push(new StreamSource(H264_PATH, 'h264', h264, config.RTSP_MAX_PAYLOAD_BYTES));
    else if (config.RTSP_H264 === 'on') log.warn({}, 'the encoder makes no H.264: /preview_h264 is off');

    // The tool server's rule: nothing beyond loopback without a credential.
    let host = info.listenHost;
    let note: string | undefined;
    if (!config.ONVIF_PASSWORD && !isLoopbackHost(host)) {
      note = `RTSP on ${host} needs ONVIF_PASSWORD: it listens on 127.0.0.1 only`;
      log.error(note);
      host = '127.0.0.1';
    }
    const notes: string[] = note ? [note] : [];
    const degrade = (text: string): void => {
      notes.push(text);
      log.error(text);
    };
    // RTSPS beside RTSP by the device surfaces' rule; whatever keeps it from serving, RTSP still does.
    const rtsps = decideRtspsTransport(host, runtime.dataDir, config.RTSPS);
    let tls: { options: RtspsOptions; paths: { certPath: string; keyPath: string }; pair: ServedPair } | undefined;
    if (rtsps.scheme === 'missing') {
      degrade(`RTSPS needs the device certificate and there is none at ${rtsps.certPath} (lookout certs --device ${runtime.id}): RTSP only`);
    } else if (rtsps.scheme === 'https') {
      try {
        const pair = await servedPairAtStart(rtsps.certPath, rtsps.keyPath, 'RTSPS', 'RTSPS');
        tls = {
          options: {
            port: surfacePort(runtime, 'rtsps', DEFAULT_RTSPS_PORT),
            cert: pair.cert,
            key: pair.key,
            handshakeTimeoutMs: config.RTSPS_HANDSHAKE_TIMEOUT_MS,
          },
          paths: { certPath: rtsps.certPath, keyPath: rtsps.keyPath },
          pair,
        };
      } catch (err) {
        degrade(`RTSPS not served: ${toLookoutError(err).message}`);
      }
    }
    const serverFor = (rtspsOptions: RtspsOptions | undefined): RtspServer =>
      new RtspServer({
        host,
        port: surfacePort(runtime, 'rtsp', DEFAULT_RTSP_PORT),
        sources,
        auth: config.ONVIF_PASSWORD ? new DigestAuth(config.ONVIF_USER, config.ONVIF_PASSWORD) : undefined,
        maxSessions: config.RTSP_MAX_SESSIONS,
        ...(config.RTSP_MAX_CONNECTIONS !== undefined ? { maxConnections: config.RTSP_MAX_CONNECTIONS } : {}),
        maxConnectionsPerAddress: config.RTSP_MAX_CONNECTIONS_PER_ADDRESS,
        maxBufferBytes: config.RTSP_MAX_BUFFER_BYTES,
        sessionTimeoutMs: config.RTSP_SESSION_TIMEOUT_S * 1000,
        preSessionTimeoutMs: config.RTSP_PRE_SESSION_TIMEOUT_MS,
        firstKeyframeWaitMs: config.RTSP_FIRST_KEYFRAME_WAIT_MS,
        ...(rtspsOptions ? { tls: rtspsOptions } : {}),
        log,
      });
    let server = serverFor(tls?.options);
    let port: number;
    try {
      port = await server.listen();
    } catch (err) {
      if (!tls) throw toLookoutError(err);
      // RTSPS's port could not be had (taken, or 322 without the right to bind it): RTSP alone.
      degrade(`RTSPS could not listen on ${host}:${tls.options.port}: ${toLookoutError(err).message}; RTSP only`);
      tls = undefined;
      server = serverFor(undefined);
      try {
        port = await server.listen();
      } catch (again) {
        throw toLookoutError(again);
      }
    }
    const serving = server;
    ctx.onStop(() => serving.close());
    ctx.ports.announce('rtsp', port);
    if (tls) {
      ctx.ports.announce('rtsps', serving.tlsPort, { tls: true });
      ctx.onStop(reloadOnSighup(serving, tls.paths, tls.pair, log, 'RTSPS'));
    }
    const service: RtspService = {
      port,
      paths: { h265: H265_PATH, h264: h264 ? H264_PATH : null },
      viewers: () => serving.viewers(),
      lastKeyframeAt: () => lastKeyframe,
    };
    ctx.services.provide(RtspServiceToken, service);
    status.paths = service.paths;
    status.server = { port, viewers: () => serving.viewers(), sessionsByTransport: () => serving.sessionsByTransport() };
    const access = config.ONVIF_PASSWORD ? `Digest as ${config.ONVIF_USER}` : 'no credentials (ONVIF_PASSWORD unset): loopback only';
    const secure = tls ? `, RTSPS on ${host}:${serving.tlsPort}` : '';
    if (notes.length > 0) ctx.health.set('degraded', notes.join('; '));
    else ctx.health.set('ok', `RTSP on ${host}:${port}${secure}, ${access}`);
    log.info({ host, port, rtsps: tls ? serving.tlsPort : null, paths: service.paths, access, udp: serving.stats().udp_ports }, 'RTSP listening');
  },
});

export { RtspServiceToken, type RtspService } from './service.js';
export { LiveStatusResultSchema, type LiveStatusResult } from './service.js';
