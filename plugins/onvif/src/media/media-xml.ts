import { xmlEscape } from '../soap/namespaces.js';
import { H264_PROFILE, H265_PROFILE, RESOLUTIONS, VIDEO_SOURCE_CONFIG_TOKEN, VIDEO_SOURCE_TOKEN, type EncoderState, type MediaProfile } from './media-model.js';

/** tt: fragments shared by Media (ver10) and Media2 (ver20). The caller declares tt. */

export function videoSourceConfigurationInner(e: EncoderState, useCount: number): string {
  return (
    `<tt:Name>VideoSourceConfig</tt:Name><tt:UseCount>${useCount}</tt:UseCount><tt:SourceToken>${VIDEO_SOURCE_TOKEN}</tt:SourceToken>` +
    `<tt:Bounds x="0" y="0" width="${e.width}" height="${e.height}"/>`
  );
}

export function videoSourceConfiguration(el: string, e: EncoderState, useCount: number): string {
  return `<${el} token="${VIDEO_SOURCE_CONFIG_TOKEN}">${videoSourceConfigurationInner(e, useCount)}</${el}>`;
}

export function videoSource(el: string, e: EncoderState): string {
  return `<${el} token="${VIDEO_SOURCE_TOKEN}"><tt:Framerate>${e.fps}</tt:Framerate><tt:Resolution><tt:Width>${e.width}</tt:Width><tt:Height>${e.height}</tt:Height></tt:Resolution></${el}>`;
}

const resolution = (e: { width: number; height: number }): string =>
  `<tt:Resolution><tt:Width>${e.width}</tt:Width><tt:Height>${e.height}</tt:Height></tt:Resolution>`;

/** Media ver10 tt:VideoEncoderConfiguration (RateControl always: node-onvif-ts throws without it). */
export function videoEncoderConfiguration(el: string, p: MediaProfile, e: EncoderState): string {
  const h264 = p.encoding === 'H264' ? `<tt:H264><tt:GovLength>${e.gop}</tt:GovLength><tt:H264Profile>${H264_PROFILE}</tt:H264Profile></tt:H264>` : '';
  return (
    `<${el} token="${xmlEscape(p.encoderToken)}"><tt:Name>${xmlEscape(p.name)}</tt:Name><tt:UseCount>1</tt:UseCount>` +
    `<tt:Encoding>${p.encoding}</tt:Encoding>${resolution(e)}<tt:Quality>5</tt:Quality>` +
    `<tt:RateControl><tt:FrameRateLimit>${e.fps}</tt:FrameRateLimit><tt:EncodingInterval>1</tt:EncodingInterval><tt:BitrateLimit>${e.bitrateKbps}</tt:BitrateLimit></tt:RateControl>` +
    h264 +
    `<tt:Multicast><tt:Address><tt:Type>IPv4</tt:Type><tt:IPv4Address>0.0.0.0</tt:IPv4Address></tt:Address><tt:Port>0</tt:Port><tt:TTL>1</tt:TTL><tt:AutoStart>false</tt:AutoStart></tt:Multicast>` +
    `<tt:SessionTimeout>PT60S</tt:SessionTimeout></${el}>`
  );
}

/** Media2 tt:VideoEncoder2Configuration. */
export function videoEncoder2Configuration(el: string, p: MediaProfile, e: EncoderState): string {
  return (
    `<${el} token="${xmlEscape(p.encoderToken)}" GovLength="${e.gop}" Profile="${p.encoding === 'H264' ? H264_PROFILE : H265_PROFILE}"><tt:Name>${xmlEscape(p.name)}</tt:Name><tt:UseCount>1</tt:UseCount>` +
    `<tt:Encoding>${p.encoding}</tt:Encoding>${resolution(e)}` +
    `<tt:RateControl ConstantBitRate="${e.cbr}"><tt:FrameRateLimit>${e.fps}</tt:FrameRateLimit><tt:BitrateLimit>${e.bitrateKbps}</tt:BitrateLimit></tt:RateControl>` +
    `<tt:Quality>5</tt:Quality></${el}>`
  );
}

export const RANGES = { fps: [1, 60], gop: [1, 600], bitrate: [100, 50_000], quality: [0, 10] } as const;

export function resolutionsAvailable(): string {
  return RESOLUTIONS.map(([w, h]) => `<tt:ResolutionsAvailable><tt:Width>${w}</tt:Width><tt:Height>${h}</tt:Height></tt:ResolutionsAvailable>`).join('');
}

/** Media ver10 tt:VideoEncoderConfigurationOptions. */
export function videoEncoderOptions(el: string): string {
  return (
    `<${el}><tt:QualityRange><tt:Min>${RANGES.quality[0]}</tt:Min><tt:Max>${RANGES.quality[1]}</tt:Max></tt:QualityRange>` +
    `<tt:H264>${resolutionsAvailable()}<tt:GovLengthRange><tt:Min>${RANGES.gop[0]}</tt:Min><tt:Max>${RANGES.gop[1]}</tt:Max></tt:GovLengthRange>` +
    `<tt:FrameRateRange><tt:Min>${RANGES.fps[0]}</tt:Min><tt:Max>${RANGES.fps[1]}</tt:Max></tt:FrameRateRange>` +
    `<tt:EncodingIntervalRange><tt:Min>1</tt:Min><tt:Max>1</tt:Max></tt:EncodingIntervalRange><tt:H264ProfilesSupported>${H264_PROFILE}</tt:H264ProfilesSupported></tt:H264>` +
    `</${el}>`
  );
}

/** Media2 tt:VideoEncoder2ConfigurationOptions, one per encoding. */
export function videoEncoder2Options(el: string, encoding: 'H265' | 'H264'): string {
  return (
    `<${el} GovLengthRange="${RANGES.gop[0]} ${RANGES.gop[1]}" FrameRatesSupported="1 2 5 10 12 15 20 25 30" ProfilesSupported="${encoding === 'H264' ? H264_PROFILE : H265_PROFILE}" ConstantBitRateSupported="true">` +
    `<tt:Encoding>${encoding}</tt:Encoding><tt:QualityRange><tt:Min>${RANGES.quality[0]}</tt:Min><tt:Max>${RANGES.quality[1]}</tt:Max></tt:QualityRange>` +
    `${resolutionsAvailable()}<tt:BitrateRange><tt:Min>${RANGES.bitrate[0]}</tt:Min><tt:Max>${RANGES.bitrate[1]}</tt:Max></tt:BitrateRange></${el}>`
  );
}

export function mediaUri(el: string, uri: string): string {
  return `<${el}><tt:Uri>${xmlEscape(uri)}</tt:Uri><tt:InvalidAfterConnect>false</tt:InvalidAfterConnect><tt:InvalidAfterReboot>false</tt:InvalidAfterReboot><tt:Timeout>PT0S</tt:Timeout></${el}>`;
}
