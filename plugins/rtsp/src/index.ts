import { definePlugin, deviceInfo, isLoopbackHost, surfacePort, toLookoutError, z } from 'lookout/core';
import { EncodedVideoToken } from '../../encode/src/service.js';
import { RtspConfigSchema } from './config.js';
import { DigestAuth } from './digest-auth.js';
import { liveStatus, type LiveStatusSources } from './live-status.js';
import { RtspServer } from './rtsp-server.js';
import { LiveStatusResultSchema, RtspServiceToken, type RtspService } from './service.js';
import { StreamSource } from './stream-source.js';

/** The RTSP port cameras use; a simulated device takes a free one. */
export const DEFAULT_RTSP_PORT = 8554;
export const H265_PATH = '/preview';
export const H264_PATH = '/preview_h264';

/**
 * The RTSP preview (layer 0): the device's one encode served to video software, /preview as H.265
 * (RFC 7798) and /preview_h264 as H.264 (RFC 6184) from the same encoder run's second output, over
 * TCP (interleaved) or UDP, with Digest sign-in when ONVIF_PASSWORD is set. Viewers never cost a
 * second encode, and a slow one is dropped instead of holding up the others or the recorder.
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
    const server = new RtspServer({
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
      log,
    });
    let port: number;
    try {
      port = await server.listen();
    } catch (err) {
      throw toLookoutError(err);
    }
    ctx.onStop(() => server.close());
    ctx.ports.announce('rtsp', port);
    const service: RtspService = {
      port,
      paths: { h265: H265_PATH, h264: h264 ? H264_PATH : null },
      viewers: () => server.viewers(),
      lastKeyframeAt: () => lastKeyframe,
    };
    ctx.services.provide(RtspServiceToken, service);
    status.paths = service.paths;
    status.server = { port, viewers: () => server.viewers(), sessionsByTransport: () => server.sessionsByTransport() };
    const access = config.ONVIF_PASSWORD ? `Digest as ${config.ONVIF_USER}` : 'no credentials (ONVIF_PASSWORD unset): loopback only';
    if (note) ctx.health.set('degraded', note);
    else ctx.health.set('ok', `RTSP on ${host}:${port}, ${access}`);
    log.info({ host, port, paths: service.paths, access, udp: server.stats().udp_ports }, 'RTSP listening');
  },
});

export { RtspServiceToken, type RtspService } from './service.js';
export { LiveStatusResultSchema, type LiveStatusResult } from './service.js';
