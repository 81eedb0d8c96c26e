import { LookoutError } from 'lookout/core';

/** A device name safe in a path and in a shell word: what a registry's device ids are. */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/**
 * A setting with `{device}` in it, for the device at hand (a simulated fleet keeps one root and one
 * runtime per device). The name goes into a path and a shell command run on the device, so only a
 * plain name is put in; a target such as `root@10.0.0.5:22` is refused where the setting asks for it.
 */
export function perDevice(template: string, device: string): string {
  if (!template.includes('{device}')) return template;
  if (!PLAIN_NAME.test(device) || device.includes('..')) {
    throw new LookoutError(
      'config_invalid',
      `{device} in the deploy settings takes a plain device name (letters, digits, _ . -), not ${JSON.stringify(device)}`,
      {
        details: { device },
      },
    );
  }
  return template.replaceAll('{device}', device);
}
