import { definePlugin, deviceInfo, surfacePort, toLookoutError } from 'lookout/core';
import { LiveJpegArgsSchema, LiveJpegResultSchema } from 'lookout/core/contracts';
import { isLoopbackHost } from 'lookout/lib/net';
import { CameraProfileToken } from '../../camera-profile/src/service.js';
import { FrameSourceToken } from '../../camera/src/service.js';
import { EncodeConfigSchema } from './config.js';
import { EncodePipeline } from './encode-pipeline.js';
import { encoderSettings } from './encode-settings.js';
import { FfmpegHevcEncoder } from './ffmpeg-hevc-encoder.js';
import { liveAccessGuard, liveToken } from './live-access.js';
import { LiveJpeg } from './live-jpeg.js';
import { LIVE_PATH, LiveServer } from './live-server.js';
import { decideLiveTransport } from './live-transport.js';
import { EncodedVideoToken } from './service.js';

/** The live stream's port on a device (beside the tool server's 8765); a simulated device takes a free one. */
export const DEFAULT_LIVE_PORT = 8766;

/**
 * The device's one H.265 encode (layer 0: every layer records). Frames from the frame source go
 * through one encoder (ffmpeg with libx265 here; a hardware encoder behind the same VideoEncoder
 * interface on a device that has one) at the camera profile's settings; the pictures feed the
 * recorder, the live stream (GET /live.h265) and get_live_jpeg without a second encode.
 */
export default definePlugin({
  name: 'encode',
  version: '1.0.0',
  core: '^1',
  description: 'H.265 encoder fed by the frame source; the EncodedVideo stream, the live stream GET /live.h265 and get_live_jpeg',
  layer: 'layer0',
  requires: [FrameSourceToken],
  optionalRequires: [CameraProfileToken],
  provides: [EncodedVideoToken],
  config: EncodeConfigSchema,
  tools: [
    {
      name: 'get_live_jpeg',
      readOnly: true,
      idempotent: true,
      description: 'The newest picture of the live H.265 stream as a JPEG (base64), w pixels wide (the height keeps the aspect), quality q',
      input: LiveJpegArgsSchema,
      output: LiveJpegResultSchema,
      // MCP clients (Claude, the Inspector) show an image block; the hub reads structuredContent.
      imageContent: { dataField: 'jpeg_base64', mimeTypeField: 'content_type' },
    },
  ],
  async start(ctx) {
    const { config, log, runtime } = ctx;
    const source = ctx.services.get(FrameSourceToken);
    const profiles = ctx.services.optional(CameraProfileToken);
    const encoder = new FfmpegHevcEncoder({ program: config.ENCODE_FFMPEG, maxQueuedFrames: config.ENCODE_MAX_QUEUED_FRAMES });

    // A live stream that could not listen where asked keeps the plugin degraded after the encoder recovers.
    let liveNote: string | undefined;
    const setHealth = (state: 'ok' | 'degraded', message: string): void => {
      if (liveNote) ctx.health.set('degraded', `${message}; ${liveNote}`);
      else ctx.health.set(state, message);
    };
    const pipeline = new EncodePipeline({
      source,
      encoder,
      settings: encoderSettings(profiles?.get(), config),
      gopMaxBytes: config.ENCODE_GOP_MAX_BYTES,
      statsWindowMs: config.ENCODE_STATS_WINDOW_MS,
      restart: { minMs: config.ENCODE_RESTART_MIN_MS, maxMs: Math.max(config.ENCODE_RESTART_MIN_MS, config.ENCODE_RESTART_MAX_MS) },
      log,
      onHealth: setHealth,
      h264: config.ENCODE_H264 !== 'off',
    });
    ctx.services.provide(EncodedVideoToken, pipeline);
    const jpeg = new LiveJpeg(pipeline, { timeoutMs: config.LIVE_JPEG_TIMEOUT_MS, maxWaiting: config.LIVE_JPEG_QUEUE });
    ctx.tools.register('get_live_jpeg', (args: { w: number; q: number }, call) => jpeg.take(args, call.signal));

    // The one-shot modes (--health, --tool) answer and exit: nothing encodes, nothing listens.
    if (deviceInfo(runtime).oneShot) {
      ctx.health.set('ok', 'one-shot mode: the encoder does not run');
      return;
    }

    const offProfile = profiles?.onChange((profile) => {
      pipeline.setSettings(encoderSettings(profile, config)).catch((err) => log.error({ code: toLookoutError(err).code }, 'encoder restart failed'));
    });
    // Once the plugins that use the video have asked for what they need (the RTSP preview its
    // H.264): started now, the first run would be restarted at once for them (a chunk of a fraction
    // of a second on every boot).
    ctx.onDependentsStarted(() => {
      pipeline.start();
      const s = pipeline.currentSettings();
      setHealth('ok', `encoding ${s.width}x${s.height} at ${s.fps} fps`);
      log.info({ encoder: encoder.name, ...s, source: `${source.width}x${source.height}` }, 'encoder started');
    });

    const token = liveToken(config, runtime.id);
    // Beside the tool server by default: a device whose tools the hub reaches has its live stream reachable too.
    let host = config.LIVE_HOST ?? deviceInfo(runtime).listenHost;
    const notes: string[] = [];
    if (!isLoopbackHost(host) && token === undefined) {
      // The tool server's rule: nothing beyond loopback without a credential. The stream stays local.
      notes.push(`LIVE_HOST ${host} needs LOOKOUT_TOOL_TOKEN or LOOKOUT_FLEET_SECRET: the live stream listens on 127.0.0.1 only`);
      host = '127.0.0.1';
    }
    const decide = (at: string) =>
      decideLiveTransport({
        host: at,
        dataDir: runtime.dataDir,
        mode: config.LIVE_TLS,
        besideToolServer: config.LIVE_HOST === undefined,
        tlsSurfaces: deviceInfo(runtime).tlsSurfaces,
      });
    let transport = decide(host);
    if (transport.scheme === 'missing' && !isLoopbackHost(host)) {
      // The token and the video would cross the network in clear: the stream stays local, as without a token.
      notes.push(
        `LIVE_HOST ${host} is beyond loopback, where the live stream serves HTTPS only, and there is no device certificate at ${transport.certPath} ` +
          `(lookout certs --device ${runtime.id}; or LIVE_TLS=off for plain HTTP): the live stream listens on 127.0.0.1 only`,
      );
      host = '127.0.0.1';
      transport = decide(host);
    }
    if (transport.scheme === 'missing') {
      notes.push(`LIVE_TLS asks for HTTPS and there is no device certificate at ${transport.certPath}: the live stream serves plain HTTP on ${host}`);
      transport = { scheme: 'http', insecure: false };
    }
    if (transport.scheme === 'http' && transport.insecure) {
      log.warn({ host }, 'LIVE_TLS=off: the live stream serves plain HTTP beyond loopback (the tool token and the video cross the network in clear)');
    }
    if (notes.length > 0) {
      liveNote = notes.join('; ');
      log.error(liveNote);
      ctx.health.set('degraded', liveNote);
    }
    const live = new LiveServer(pipeline, {
      host,
      port: config.LIVE_PORT ?? surfacePort(runtime, 'live', DEFAULT_LIVE_PORT),
      maxClients: config.LIVE_MAX_CLIENTS,
      maxBufferBytes: config.LIVE_MAX_BUFFER_BYTES,
      guard: liveAccessGuard({ host, token }),
      ...(transport.scheme === 'https' ? { tls: { certPath: transport.certPath, keyPath: transport.keyPath } } : {}),
      log,
    });
    try {
      const port = await live.listen();
      ctx.ports.announce('live', port, { tls: live.scheme === 'https' });
      log.info({ host, port, path: LIVE_PATH, scheme: live.scheme, access: token ? 'bearer token beyond loopback' : 'loopback only' }, 'live stream listening');
    } catch (err) {
      // Recording matters more than watching: the encoder runs on, the plugin says why nobody can watch.
      liveNote = `the live stream could not listen on ${host}:${config.LIVE_PORT ?? DEFAULT_LIVE_PORT}: ${toLookoutError(err).message}`;
      log.error(liveNote);
      ctx.health.set('degraded', liveNote);
    }

    return {
      async stop() {
        offProfile?.();
        await live.close();
        await pipeline.stop();
      },
    };
  },
});

export { EncodedVideoToken } from './service.js';
export type { H264Video } from './service.js';
export type { EncodedPicture, EncodedVideo, EncoderStats, EncoderExit, EncoderInfo } from './service.js';
export type { VideoEncoder, EncoderSettings, RawInput, EncoderHandlers, EncoderExitInfo } from './video-encoder.js';
export { FfmpegHevcEncoder } from './ffmpeg-hevc-encoder.js';
export { EncodePipeline } from './encode-pipeline.js';
