import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { LookoutError } from 'lookout/core';

/** One point of a simulated temperature script: at `atS` seconds after start, `celsius`. */
export const TempPointSchema = z.object({ atS: z.number().nonnegative(), celsius: z.number().min(-40).max(150) });
export type TempPoint = z.infer<typeof TempPointSchema>;

export const TempScriptSchema = z
  .array(TempPointSchema)
  .min(1, 'at least one point')
  .refine((points) => points.every((p, i) => i === 0 || p.atS >= points[i - 1].atS), 'points must be in order of atS');

/** The simulated die without a script: steady about 48 °C with a slow half-degree swing. */
export const DEFAULT_SIM_CELSIUS = 48;
export function defaultSimTemperature(seconds: number): number {
  return round(DEFAULT_SIM_CELSIUS + 0.5 * Math.sin((2 * Math.PI * seconds) / 120));
}

/** Linear interpolation between points; before the first and after the last point it holds. */
export function temperatureAt(script: TempPoint[], seconds: number): number {
  const first = script[0];
  if (seconds <= first.atS) return first.celsius;
  for (let i = 1; i < script.length; i++) {
    const b = script[i];
    if (seconds <= b.atS) {
      const a = script[i - 1];
      const span = b.atS - a.atS;
      return round(span === 0 ? b.celsius : a.celsius + ((b.celsius - a.celsius) * (seconds - a.atS)) / span);
    }
  }
  return script[script.length - 1].celsius;
}

export async function loadTempScript(path: string): Promise<TempPoint[]> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new LookoutError('config_invalid', `SIM_TEMP_SCRIPT=${path} cannot be read: ${(err as Error).message}`, {
      cause: err,
      details: { key: 'SIM_TEMP_SCRIPT', path },
    });
  }
  const parsed = TempScriptSchema.safeParse(raw);
  if (!parsed.success) {
    throw new LookoutError(
      'config_invalid',
      `SIM_TEMP_SCRIPT=${path} is invalid: ${z.prettifyError(parsed.error)}; expected a list like [{ "atS": 0, "celsius": 45 }]`,
      {
        details: { key: 'SIM_TEMP_SCRIPT', path, issues: parsed.error.issues },
      },
    );
  }
  return parsed.data;
}

function round(c: number): number {
  return Math.round(c * 100) / 100;
}
