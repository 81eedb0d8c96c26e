import { freemem, loadavg, totalmem, uptime as systemUptime } from 'node:os';
import { z } from 'zod';
import { HealthMessageSchema, PluginReportSchema, type HealthMessage, type StorageHealth } from 'lookout/core/contracts';
import { type PluginReport } from 'lookout/core';
import { storageHealth, type StorageThresholds } from './storage-health.js';
import { measureStorage, type StorageUsage } from './storage-usage.js';

/** Why the storage could not be measured, as every error is said. */
export const StorageErrorSchema = z.object({ code: z.literal('storage_unmeasurable'), message: z.string() });
export type StorageError = z.infer<typeof StorageErrorSchema>;

export type OverallStatus = 'ok' | 'degraded' | 'critical';

export interface HealthInputs {
  deviceId: string;
  serial: string;
  role: string;
  fingerprintPresent: boolean;
  recordingsDir: string;
  thresholds: StorageThresholds;
  plugins: PluginReport[];
}

/** The `health` message and the body of get_system_health. */
export async function healthReport(inputs: HealthInputs): Promise<HealthMessage & { storage_error?: StorageError }> {
  let usage: StorageUsage | undefined;
  let storageError: StorageError | undefined;
  try {
    usage = await measureStorage(inputs.recordingsDir);
  } catch (err) {
    const message = `cannot measure ${inputs.recordingsDir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
    storageError = { code: 'storage_unmeasurable', message };
  }
  // Storage that cannot even be measured is as bad as full: recording is not possible.
  const storage_health: StorageHealth = usage ? storageHealth(usage.used_pct, inputs.thresholds) : 'CRITICAL';
  const report = {
    timestamp: new Date().toISOString(),
    device_id: inputs.deviceId,
    status: overallStatus(storage_health, inputs.plugins),
    storage_health,
    cert_fingerprint_present: inputs.fingerprintPresent,
    serial: inputs.serial,
    role: inputs.role,
    storage: usage
      ? { ...usage, warn_pct: inputs.thresholds.warnPct, critical_pct: inputs.thresholds.criticalPct }
      : { path: inputs.recordingsDir, free_gb: 0, used_pct: 100, warn_pct: inputs.thresholds.warnPct, critical_pct: inputs.thresholds.criticalPct },
    ...(storageError ? { storage_error: storageError } : {}),
    plugins: inputs.plugins,
  };
  return HealthMessageSchema.parse(report);
}

export function overallStatus(storage: StorageHealth, plugins: PluginReport[]): OverallStatus {
  if (storage === 'CRITICAL' || plugins.some((p) => p.state === 'failed')) return 'critical';
  if (storage === 'WARNING' || plugins.some((p) => p.state === 'degraded')) return 'degraded';
  return 'ok';
}

/** What the host adds for get_system_health: uptime, memory and load. */
export function hostFigures(startedAt: number): { uptime_s: number; system_uptime_s: number; memory: Record<string, number>; load_avg: number[] } {
  const rss = process.memoryUsage().rss;
  return {
    uptime_s: Math.round((Date.now() - startedAt) / 1000),
    system_uptime_s: Math.round(systemUptime()),
    memory: { rss_mb: mb(rss), system_free_mb: mb(freemem()), system_total_mb: mb(totalmem()) },
    load_avg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

function mb(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}

/** The broker link (`down` while the device works without it) and its outbox; null on an in-process bus. */
export const BusHealthSchema = z.object({
  state: z.enum(['connected', 'down']),
  outbox: z.object({
    queued: z.number(),
    queued_bytes: z.number(),
    kept: z.number(),
    delivered: z.number(),
    dropped: z.number(),
    recovered: z.number(),
    torn: z.number(),
    written: z.number(),
    max_messages: z.number(),
    max_bytes: z.number(),
  }),
  qos0_dropped: z.number(),
  retained_waiting: z.number(),
});

/** A device that cannot reach its broker still works, but the fleet does not hear it: degraded at worst. */
export function withBus(status: OverallStatus, bus: z.infer<typeof BusHealthSchema> | null): OverallStatus {
  return status === 'ok' && bus?.state === 'down' ? 'degraded' : status;
}

export const SystemHealthResultSchema = HealthMessageSchema.extend({
  bus: BusHealthSchema.nullable().optional(),
  die_temp_c: z.number().nullable(),
  /** Why die_temp_c is null (the sensor cannot be read), or why the last reading failed. */
  die_temp_reason: z.string().nullable(),
  uptime_s: z.number(),
  system_uptime_s: z.number(),
  memory: z.record(z.string(), z.number()),
  load_avg: z.array(z.number()),
  storage_error: StorageErrorSchema.optional(),
});

export const DeviceHealthResultSchema = z.object({
  timestamp: z.string(),
  device_id: z.string(),
  status: z.enum(['ok', 'degraded', 'critical']),
  storage_health: z.enum(['OK', 'WARNING', 'CRITICAL']),
  cert_fingerprint_present: z.boolean(),
  serial: z.string(),
  role: z.string(),
  die_temp_c: z.number().nullable(),
  /** Why die_temp_c is null (the sensor cannot be read), or why the last reading failed. */
  die_temp_reason: z.string().nullable(),
  thermal_state: z.enum(['NORMAL', 'THERMAL_WARN', 'THERMAL_CRITICAL']),
  bus: BusHealthSchema.nullable().optional(),
  plugins: z.array(PluginReportSchema),
  disabled_plugins: z.array(z.object({ name: z.string(), reason: z.string() })),
  uptime_s: z.number(),
});
