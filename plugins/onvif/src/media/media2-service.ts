import type { Element } from '@xmldom/xmldom';
import { declare, xmlEscape } from '../soap/namespaces.js';
import { childElements, text } from '../soap/soap-request.js';
import { faults } from '../soap/soap-fault.js';
import type { OnvifSurface, RequestInfo } from '../surface.js';
import { VIDEO_SOURCE_CONFIG_TOKEN, type MediaProfile } from './media-model.js';
import { videoEncoder2Configuration, videoEncoder2Options, videoSourceConfiguration } from './media-xml.js';
import { findProfile, rtspUri, snapshotUri } from './media1-service.js';
import { setVideoEncoderConfiguration } from './set-encoder.js';

const ns = declare('tr2', 'tt');

/** Media2 (ver20): profiles with Type filters, VideoEncoder2 configurations, plain URIs. */
export async function media2(surface: OnvifSurface, action: string, body: Element, req: RequestInfo): Promise<string> {
  const e = surface.encoder();
  const profiles = surface.profiles();
  const encodersFor = (): MediaProfile[] => {
    const configToken = text(body, 'ConfigurationToken');
    const profileToken = text(body, 'ProfileToken');
    if (profileToken) return [findProfile(surface, profileToken)];
    if (configToken) {
      const p = profiles.find((x) => x.encoderToken === configToken);
      if (!p) throw faults.invalidArg(`no video encoder configuration "${configToken}"`);
      return [p];
    }
    return profiles;
  };
  switch (action) {
    case 'GetProfiles': {
      const token = text(body, 'Token');
      const chosen = token ? [findProfile(surface, token)] : profiles;
      // Type: All, or the configuration types wanted (VideoSource, VideoEncoder…); none means names only.
      const types = new Set(
        childElements(body)
          .filter((c) => c.localName === 'Type')
          .map((c) => (c.textContent ?? '').trim()),
      );
      const want = (t: string): boolean => types.has('All') || types.has(t);
      const xml = chosen.map(
        (p) =>
          `<tr2:Profiles token="${p.token}" fixed="true"><tr2:Name>${p.name}</tr2:Name><tr2:Configurations>` +
          (want('VideoSource') ? videoSourceConfiguration('tr2:VideoSource', e, profiles.length) : '') +
          (want('VideoEncoder') ? videoEncoder2Configuration('tr2:VideoEncoder', p, e) : '') +
          `</tr2:Configurations></tr2:Profiles>`,
      );
      return `<tr2:GetProfilesResponse ${ns}>${xml.join('')}</tr2:GetProfilesResponse>`;
    }
    case 'GetVideoSourceConfigurations': {
      const token = text(body, 'ConfigurationToken');
      if (token && token !== VIDEO_SOURCE_CONFIG_TOKEN) throw faults.invalidArg(`no video source configuration "${token}"`);
      const profileToken = text(body, 'ProfileToken');
      if (profileToken) findProfile(surface, profileToken);
      return `<tr2:GetVideoSourceConfigurationsResponse ${ns}>${videoSourceConfiguration('tr2:Configurations', e, profiles.length)}</tr2:GetVideoSourceConfigurationsResponse>`;
    }
    case 'GetVideoEncoderConfigurations':
      return `<tr2:GetVideoEncoderConfigurationsResponse ${ns}>${encodersFor()
        .map((p) => videoEncoder2Configuration('tr2:Configurations', p, e))
        .join('')}</tr2:GetVideoEncoderConfigurationsResponse>`;
    case 'GetVideoEncoderConfigurationOptions': {
      const encodings = [...new Set(encodersFor().map((p) => p.encoding))];
      return `<tr2:GetVideoEncoderConfigurationOptionsResponse ${ns}>${encodings.map((enc) => videoEncoder2Options('tr2:Options', enc)).join('')}</tr2:GetVideoEncoderConfigurationOptionsResponse>`;
    }
    case 'SetVideoEncoderConfiguration':
      await setVideoEncoderConfiguration(surface, body);
      return `<tr2:SetVideoEncoderConfigurationResponse/>`;
    case 'GetStreamUri': {
      const profile = findProfile(surface, text(body, 'ProfileToken'));
      const protocol = text(body, 'Protocol') ?? 'RTSP';
      if (protocol === 'RtspMulticast') throw faults.invalidArg('multicast streaming is not offered');
      return `<tr2:GetStreamUriResponse ${ns}><tr2:Uri>${xmlEscape(rtspUri(surface, req, profile))}</tr2:Uri></tr2:GetStreamUriResponse>`;
    }
    case 'GetSnapshotUri':
      findProfile(surface, text(body, 'ProfileToken'));
      return `<tr2:GetSnapshotUriResponse ${ns}><tr2:Uri>${xmlEscape(snapshotUri(surface, req))}</tr2:Uri></tr2:GetSnapshotUriResponse>`;
    case 'GetServiceCapabilities':
      return (
        `<tr2:GetServiceCapabilitiesResponse ${ns}><tr2:Capabilities SnapshotUri="true" Rotation="false" VideoSourceMode="false" OSD="false" Mask="false" SourceMask="false">` +
        `<tr2:ProfileCapabilities MaximumNumberOfProfiles="${profiles.length}" ConfigurationsSupported="VideoSource VideoEncoder"/>` +
        `<tr2:StreamingCapabilities RTSPStreaming="true" RTPMulticast="false" RTP_RTSP_TCP="true" NonAggregateControl="false" AutoStartMulticast="false"/>` +
        `</tr2:Capabilities></tr2:GetServiceCapabilitiesResponse>`
      );
    default:
      throw faults.actionNotSupported(action);
  }
}
