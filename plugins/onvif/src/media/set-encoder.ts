import type { Element } from '@xmldom/xmldom';
import { isLookoutError } from 'lookout/core';
import type { CameraProfileService } from '../../../camera-profile/src/service.js';
type CameraProfile = ReturnType<CameraProfileService['get']>;
import { child, text } from '../soap/soap-request.js';
import { faults, SoapFault } from '../soap/soap-fault.js';
import type { OnvifSurface } from '../surface.js';
import { RANGES } from './media-xml.js';

function int(value: string | null | undefined, name: string, [min, max]: readonly [number, number]): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw faults.invalidArg(`${name} must be an integer from ${min} to ${max} (got "${value}")`);
  return n;
}

/**
 * SetVideoEncoderConfiguration (Media ver10 and Media2 alike): the Configuration's resolution, frame
 * rate, bitrate, keyframe interval and rate control go into the camera profile (validated there and
 * persisted; the encoder restarts on it); then ConfigurationChanged. Fields a client leaves out stay.
 */
export async function setVideoEncoderConfiguration(surface: OnvifSurface, body: Element): Promise<void> {
  const config = child(body, 'Configuration');
  if (!config) throw faults.invalidArg('Configuration is missing');
  const token = config.getAttribute('token') ?? '';
  const profile = surface.profiles().find((p) => p.encoderToken === token);
  if (!profile) throw new SoapFault('Sender', 'ter:InvalidArgVal', `no video encoder configuration "${token}"`, 400, 'ter:NoConfig');
  const encoding = text(config, 'Encoding');
  if (encoding && encoding !== profile.encoding) {
    throw new SoapFault('Sender', 'ter:InvalidArgVal', `the configuration "${token}" encodes ${profile.encoding}, not ${encoding}`, 400, 'ter:ConfigModify');
  }
  const update: Partial<CameraProfile> = {};
  const width = int(text(config, 'Resolution', 'Width'), 'Resolution/Width', [160, 7680]);
  const height = int(text(config, 'Resolution', 'Height'), 'Resolution/Height', [120, 4320]);
  if ((width === undefined) !== (height === undefined)) throw faults.invalidArg('Resolution needs Width and Height');
  if (width !== undefined && height !== undefined) update.resolution = `${width}x${height}`;
  const rate = child(config, 'RateControl');
  const fps = int(text(rate, 'FrameRateLimit'), 'RateControl/FrameRateLimit', RANGES.fps);
  if (fps !== undefined) update.fps = fps;
  const bitrate = int(text(rate, 'BitrateLimit'), 'RateControl/BitrateLimit', RANGES.bitrate);
  if (bitrate !== undefined) update.bitrate_kbps = bitrate;
  // Media2 puts GovLength in an attribute and CBR on RateControl; Media ver10 in H264/GovLength.
  const gop = int(config.getAttribute('GovLength') || text(config, 'H264', 'GovLength'), 'GovLength', RANGES.gop);
  if (gop !== undefined) update.gop = gop;
  const cbr = rate?.getAttribute('ConstantBitRate');
  if (cbr === 'true' || cbr === '1') update.rate_control = 'CBR';
  else if (cbr === 'false' || cbr === '0') update.rate_control = 'VBR';
  if (Object.keys(update).length === 0) return;
  try {
    await surface.cameraProfile.set(update);
  } catch (err) {
    if (isLookoutError(err) && err.code === 'tool_arguments_invalid') throw faults.invalidArg(err.message);
    throw new SoapFault('Receiver', 'ter:Action', `the camera profile could not be written: ${(err as Error).message}`, 500);
  }
  surface.configurationChanged(token, 'VideoEncoder');
}
