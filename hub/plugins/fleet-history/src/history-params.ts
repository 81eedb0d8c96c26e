import { z } from 'zod';
import { DeviceIdSchema } from 'lookout/core/contracts';

/** An instant in a query: epoch milliseconds, or an ISO 8601 date-time (`2026-11-27T10:00:00Z`). */
export const TimeParam = z
  .string()
  .max(40)
  .transform((s, ctx) => {
    const ms = /^\d{1,16}$/.test(s) ? Number(s) : /^\d{4}-\d{2}-\d{2}T/.test(s) ? Date.parse(s) : NaN;
    if (!Number.isSafeInteger(ms)) {
      ctx.addIssue({ code: 'custom', message: 'must be epoch milliseconds or an ISO 8601 date-time' });
      return z.NEVER;
    }
    return ms;
  });

export const Target = z.string().min(1).max(256).describe('device id or role label (e.g. "front_door"); every device carrying the label');

export const SpanQuery = {
  from: TimeParam.optional().describe('start (epoch ms or ISO 8601); default: `to` minus one hour'),
  to: TimeParam.optional().describe('end, exclusive (epoch ms or ISO 8601); default: now'),
};

export const Sources = z.object({
  devices: z.array(DeviceIdSchema).describe('the devices whose own counts the numbers are'),
  from: z.string().describe('start of the span the answer covers (ISO 8601)'),
  to: z.string().describe('end of the span (ISO 8601, exclusive)'),
  kind: z.literal('history'),
});

/** The span asked for, checked: from before to, at most `maxDays`. */
export function spanOf(q: { from?: number; to?: number }, now: number, maxDays: number): { from: number; to: number } | string {
  const to = q.to ?? now;
  const from = q.from ?? to - 3_600_000;
  if (from >= to) return '`from` must be before `to`';
  if (to - from > maxDays * 86_400_000) return `the span may cover at most ${maxDays} days`;
  return { from, to };
}

export function sourcesOf(devices: readonly string[], from: number, to: number): z.output<typeof Sources> {
  return { devices: [...devices].sort(), from: new Date(from).toISOString(), to: new Date(to).toISOString(), kind: 'history' };
}
