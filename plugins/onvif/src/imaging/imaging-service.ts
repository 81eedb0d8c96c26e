import type { Element } from '@xmldom/xmldom';
import { childElements, text } from '../soap/soap-request.js';
import { faults, SoapFault } from '../soap/soap-fault.js';
import { VIDEO_SOURCE_TOKEN } from '../media/media-model.js';

/**
 * Imaging (ver20) of the one video source. The sources this device has (the simulated scene, a
 * camera read as finished frames) take no brightness, contrast, exposure, focus, white balance or
 * day/night control, and the encoder applies none: the settings and options are answered empty
 * (every element of tt:ImagingSettings20 and tt:ImagingOptions20 is optional, an absent one means
 * "not adjustable"), and a SetImagingSettings that asks for any of them is refused with a fault
 * naming each setting, rather than accepted and silently ignored.
 */
export function imagingService(action: string, body: Element): string {
  switch (action) {
    case 'GetServiceCapabilities':
      return `<timg:GetServiceCapabilitiesResponse><timg:Capabilities ImageStabilization="false" Presets="false" AdaptablePreset="false"/></timg:GetServiceCapabilitiesResponse>`;
    case 'GetImagingSettings':
      source(body);
      return `<timg:GetImagingSettingsResponse><timg:ImagingSettings/></timg:GetImagingSettingsResponse>`;
    case 'GetOptions':
      source(body);
      return `<timg:GetOptionsResponse><timg:ImagingOptions/></timg:GetOptionsResponse>`;
    case 'GetMoveOptions':
      source(body);
      return `<timg:GetMoveOptionsResponse><timg:MoveOptions/></timg:GetMoveOptionsResponse>`;
    case 'GetStatus':
      source(body);
      return `<timg:GetStatusResponse><timg:Status/></timg:GetStatusResponse>`;
    case 'SetImagingSettings': {
      source(body);
      const settings = childElements(body).find((c) => c.localName === 'ImagingSettings');
      const asked = settings ? childElements(settings).map((c) => c.localName ?? '') : [];
      if (asked.length > 0) {
        throw new SoapFault(
          'Sender',
          'ter:InvalidArgVal',
          `not supported by this camera's source: ${asked.map((a) => `${a} (not supported)`).join(', ')}`,
          400,
          'ter:SettingsInvalid',
        );
      }
      return `<timg:SetImagingSettingsResponse/>`;
    }
    case 'Move':
    case 'Stop':
      source(body);
      throw new SoapFault('Receiver', 'ter:ActionNotSupported', 'this camera has no focus to move', 400, 'ter:NoImagingForSource');
    default:
      throw faults.actionNotSupported(action);
  }
}

function source(body: Element): void {
  const token = text(body, 'VideoSourceToken');
  if (token !== VIDEO_SOURCE_TOKEN) throw new SoapFault('Sender', 'ter:InvalidArgVal', `no video source "${token ?? ''}"`, 400, 'ter:NoSource');
}
