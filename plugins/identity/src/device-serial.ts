import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { devicePath } from 'lookout/core';

/** Where a Linux board exposes its serial number (device tree). */
export const SERIAL_NUMBER_PATH = '/proc/device-tree/serial-number';

/**
 * The device serial: configured (DEVICE_SERIAL), else the board's device-tree serial under the data
 * root, else, in development, a stable one derived from the device id (`SIM-` + 12 hex digits).
 */
export async function deviceSerial(options: {
  configured?: string;
  dataDir: string;
  deviceId: string;
}): Promise<{ serial: string; source: 'config' | 'device-tree' | 'derived' }> {
  if (options.configured) return { serial: options.configured, source: 'config' };
  try {
    const text = (await readFile(devicePath(options.dataDir, SERIAL_NUMBER_PATH), 'utf8')).replace(/\0/g, '').trim();
    if (text) return { serial: text, source: 'device-tree' };
  } catch {
    // No device tree (development): derive below.
  }
  const hash = createHash('sha256').update(options.deviceId).digest('hex').slice(0, 12).toUpperCase();
  return { serial: `SIM-${hash}`, source: 'derived' };
}
