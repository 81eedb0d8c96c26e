import { readFile } from 'node:fs/promises';
import { LookoutError } from 'lookout/core';

/**
 * Reads a Linux thermal zone (`/sys/class/thermal/thermal_zoneN/temp`), which holds millidegrees
 * Celsius as an integer. Anything else is an error naming the file, never a made-up reading.
 */
export async function readThermalZone(path: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new LookoutError('config_invalid', `DIE_TEMP_ZONE=${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
      cause: err,
      details: { key: 'DIE_TEMP_ZONE', path },
    });
  }
  const trimmed = text.trim();
  if (!/^-?\d+$/.test(trimmed)) {
    throw new LookoutError('config_invalid', `DIE_TEMP_ZONE=${path} does not hold millidegrees Celsius (read "${trimmed.slice(0, 20)}")`, {
      details: { key: 'DIE_TEMP_ZONE', path },
    });
  }
  return Number(trimmed) / 1000;
}
