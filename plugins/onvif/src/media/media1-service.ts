import type { Element } from '@xmldom/xmldom';
import { declare } from '../soap/namespaces.js';
import { text } from '../soap/soap-request.js';
import { faults } from '../soap/soap-fault.js';
import { baseUrl, PATHS, type OnvifSurface, type RequestInfo } from '../surface.js';
import { media1Profiles, VIDEO_SOURCE_CONFIG_TOKEN, VIDEO_SOURCE_TOKEN, type MediaProfile } from './media-model.js';
import { mediaUri, videoEncoderConfiguration, videoEncoderOptions, videoSource, videoSourceConfiguration } from './media-xml.js';
import { setVideoEncoderConfiguration } from './set-encoder.js';

const ns = declare('trt', 'tt');

export function rtspUri(surface: OnvifSurface, req: RequestInfo, profile: MediaProfile): string {
  return `rtsp://${req.host}:${surface.rtspPort()}${profile.rtspPath}`;
}

export function snapshotUri(surface: OnvifSurface, req: RequestInfo): string {
  return `${baseUrl(surface, req)}${PATHS.snapshot}`;
}

export function findProfile(surface: OnvifSurface, token: string | undefined): MediaProfile {
  const profile = surface.profiles().find((p) => p.token === token);
  if (!profile) throw faults.noProfile(token ?? '');
  return profile;
}

/** Media (ver10): what node-onvif-ts, Home Assistant and most clients speak. Resolves to the response Body content. */
export async function media1(surface: OnvifSurface, action: string, body: Element, req: RequestInfo): Promise<string> {
  const e = surface.encoder();
  const profiles = media1Profiles(surface.profiles());
  const findMedia1Profile = (token: string | undefined): MediaProfile => {
    const profile = profiles.find((p) => p.token === token);
    if (!profile) throw faults.noProfile(token ?? '');
    return profile;
  };
  const profileXml = (el: string, p: MediaProfile): string =>
    `<${el} token="${p.token}" fixed="true"><tt:Name>${p.name}</tt:Name>${videoSourceConfiguration('tt:VideoSourceConfiguration', e, profiles.length)}` +
    `${videoEncoderConfiguration('tt:VideoEncoderConfiguration', p, e)}</${el}>`;
  const encoderFor = (token: string | undefined): MediaProfile => {
    const p = profiles.find((x) => x.encoderToken === token);
    if (!p) throw faults.invalidArg(`no video encoder configuration "${token ?? ''}"`);
    return p;
  };
  switch (action) {
    case 'GetProfiles':
      return `<trt:GetProfilesResponse ${ns}>${profiles.map((p) => profileXml('trt:Profiles', p)).join('')}</trt:GetProfilesResponse>`;
    case 'GetProfile':
      return `<trt:GetProfileResponse ${ns}>${profileXml('trt:Profile', findMedia1Profile(text(body, 'ProfileToken')))}</trt:GetProfileResponse>`;
    case 'GetVideoSources':
      return `<trt:GetVideoSourcesResponse ${ns}>${videoSource('trt:VideoSources', e)}</trt:GetVideoSourcesResponse>`;
    case 'GetVideoSourceConfigurations':
      return `<trt:GetVideoSourceConfigurationsResponse ${ns}>${videoSourceConfiguration('trt:Configurations', e, profiles.length)}</trt:GetVideoSourceConfigurationsResponse>`;
    case 'GetVideoSourceConfiguration': {
      const token = text(body, 'ConfigurationToken');
      if (token !== VIDEO_SOURCE_CONFIG_TOKEN) throw faults.invalidArg(`no video source configuration "${token ?? ''}"`);
      return `<trt:GetVideoSourceConfigurationResponse ${ns}>${videoSourceConfiguration('trt:Configuration', e, profiles.length)}</trt:GetVideoSourceConfigurationResponse>`;
    }
    case 'GetVideoEncoderConfigurations':
      return `<trt:GetVideoEncoderConfigurationsResponse ${ns}>${profiles.map((p) => videoEncoderConfiguration('trt:Configurations', p, e)).join('')}</trt:GetVideoEncoderConfigurationsResponse>`;
    case 'GetVideoEncoderConfiguration':
      return `<trt:GetVideoEncoderConfigurationResponse ${ns}>${videoEncoderConfiguration('trt:Configuration', encoderFor(text(body, 'ConfigurationToken')), e)}</trt:GetVideoEncoderConfigurationResponse>`;
    case 'GetVideoEncoderConfigurationOptions': {
      const profileToken = text(body, 'ProfileToken');
      if (profileToken) findMedia1Profile(profileToken);
      const configToken = text(body, 'ConfigurationToken');
      if (configToken) encoderFor(configToken);
      return `<trt:GetVideoEncoderConfigurationOptionsResponse ${ns}>${videoEncoderOptions('trt:Options')}</trt:GetVideoEncoderConfigurationOptionsResponse>`;
    }
    case 'SetVideoEncoderConfiguration':
      await setVideoEncoderConfiguration(surface, body);
      return `<trt:SetVideoEncoderConfigurationResponse/>`;
    case 'GetStreamUri': {
      const profile = findMedia1Profile(text(body, 'ProfileToken'));
      const stream = text(body, 'StreamSetup', 'Stream');
      if (stream === 'RTP-Multicast') throw faults.invalidArg('multicast streaming is not offered');
      // UDP, TCP, RTSP and HTTP setups all get the RTSP URI: the server speaks RTP over UDP and interleaved over TCP.
      return `<trt:GetStreamUriResponse ${ns}>${mediaUri('trt:MediaUri', rtspUri(surface, req, profile))}</trt:GetStreamUriResponse>`;
    }
    case 'GetSnapshotUri':
      findMedia1Profile(text(body, 'ProfileToken'));
      return `<trt:GetSnapshotUriResponse ${ns}>${mediaUri('trt:MediaUri', snapshotUri(surface, req))}</trt:GetSnapshotUriResponse>`;
    case 'GetServiceCapabilities':
      return (
        `<trt:GetServiceCapabilitiesResponse ${ns}><trt:Capabilities SnapshotUri="true" Rotation="false" VideoSourceMode="false" OSD="false">` +
        `<trt:ProfileCapabilities MaximumNumberOfProfiles="${profiles.length}"/>` +
        `<trt:StreamingCapabilities RTPMulticast="false" RTP_TCP="true" RTP_RTSP_TCP="true" NonAggregateControl="false" NoRTSPStreaming="false"/>` +
        `</trt:Capabilities></trt:GetServiceCapabilitiesResponse>`
      );
    case 'GetAudioSources':
      return `<trt:GetAudioSourcesResponse/>`;
    default:
      throw faults.actionNotSupported(action);
  }
}

export { VIDEO_SOURCE_TOKEN };
