import type { EncodedPicture } from '../../encode/src/service.js';
import { parameterSetsOf, type ParameterSets, type VideoCodec } from './nal-units.js';
import { packetize } from './rtp-packetizer.js';

/** What a path streams from: the encoder's H.265 stream or its H.264 output (same shape). */
export interface PictureStream {
  readonly fps: number;
  readonly running: boolean;
  subscribe(listener: (picture: EncodedPicture) => void): () => void;
  latestGop(): EncodedPicture[];
}

/**
 * One RTSP path (/preview, /preview_h264): its codec, its pictures, and each picture's RTP payloads
 * made once and shared by every viewer (a viewer more costs its headers and its sends, not a
 * second packetization).
 */
export class StreamSource {
  private readonly payloadCache = new WeakMap<EncodedPicture, Buffer[]>();

  constructor(
    readonly path: string,
    readonly codec: VideoCodec,
    readonly stream: PictureStream,
    private readonly maxPayload: number,
  ) {}

  payloads(picture: EncodedPicture): Buffer[] {
    let p = this.payloadCache.get(picture);
    if (!p) {
      p = packetize(this.codec, picture.data, this.maxPayload);
      this.payloadCache.set(picture, p);
    }
    return p;
  }

  /** The parameter sets of the latest keyframe, undefined before the first one. */
  parameterSets(): ParameterSets | undefined {
    const key = this.stream.latestGop()[0];
    return key?.keyframe ? parameterSetsOf(this.codec, key.data) : undefined;
  }

  /** Resolves with the parameter sets once a keyframe is there, undefined after `waitMs` or an abort. */
  async waitForParameterSets(waitMs: number, signal: AbortSignal): Promise<ParameterSets | undefined> {
    const now = this.parameterSets();
    if (now || waitMs <= 0) return now;
    return new Promise((resolve) => {
      const done = (value: ParameterSets | undefined): void => {
        clearTimeout(timer);
        off();
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onAbort = (): void => done(undefined);
      const timer = setTimeout(() => done(undefined), waitMs);
      const off = this.stream.subscribe((picture) => {
        if (picture.keyframe) done(parameterSetsOf(this.codec, picture.data));
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
