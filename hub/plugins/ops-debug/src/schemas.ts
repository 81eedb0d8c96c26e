import { z } from 'zod';
import { DeviceIdSchema, queryInteger, queryList } from 'lookout/core/contracts';

export const LEVEL_NAMES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
const MiB = 1024 * 1024;
/** A log file name on the device: one plain name, never a path. */
const LogFileName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'one file name (letters, digits, . _ -), not a path');

export const LogTailQuery = z.object({
  lines: queryInteger(1, 10_000).default(200).describe('newest lines to return, at most'),
  max_bytes: queryInteger(1, 4 * MiB)
    .default(256 * 1024)
    .describe('bytes of the returned lines, at most (the newest whole lines are kept)'),
  level: z.enum(LEVEL_NAMES).optional().describe('only lines at this level or above'),
  component: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/, 'a component or plugin name')
    .optional()
    .describe('only lines of this component (state, broker, bus…) or plugin (registry, device-ssh…)'),
});

export const LogTailResponse = z.object({
  lines: z
    .array(
      z.object({
        seq: z.number().int(),
        time: z.string(),
        level: z.string(),
        component: z.string().nullable(),
        record: z.unknown().describe('the JSON line as the hub logged it, secrets redacted'),
      }),
    )
    .describe('oldest first'),
  matched: z.number().int().describe('lines held that match the filter'),
  held: z.number().int(),
  dropped: z.number().int().describe('lines pushed out of the ring since start'),
  max_lines: z.number().int(),
  max_bytes: z.number().int(),
});

export const DeviceLogsQuery = z.object({
  file: LogFileName.default('lookout-edge.log').describe('a log file in the device\u2019s logs folder (LOOKOUT_DEVICE_LOGS_DIR, default /data/logs)'),
  lines: queryInteger(1, 10_000).default(200).describe('last lines of the file'),
  max_bytes: queryInteger(1, 4 * MiB)
    .default(256 * 1024)
    .describe('bytes at most (with follow: in all, then the stream ends)'),
  follow: z.enum(['true', 'false']).default('false').describe('true: Server-Sent Events (text/event-stream), a `line` event per line as written, then `end`'),
  follow_s: queryInteger(1, 3600).default(300).describe('with follow: how long at most (bounded by LOOKOUT_DEBUG_FOLLOW_MAX_S)'),
});

export const DeviceLogsResponse = z.object({
  device_id: z.string(),
  dir: z.string(),
  file: z.string(),
  lines: z.array(z.string()).describe('oldest first, secrets the hub knows redacted'),
  bytes: z.number().int(),
  truncated: z.boolean().describe('cut at max_bytes'),
});

export const ExportQuery = z.object({
  device: queryList(DeviceIdSchema).optional().describe('devices whose logs to add (comma-separated), at most LOOKOUT_DEBUG_EXPORT_MAX_DEVICES'),
  lines: queryInteger(1, 10_000).default(1000).describe('log lines per log (the hub\u2019s and each device\u2019s)'),
});
