import { z } from 'zod';
import { READINESS_ENRICHMENT_FIELDS } from 'lookout/core/contracts';

/**
 * The readiness modules (spec 01, "Modules graded by readiness"): what each grades is written beside
 * its grader (grade-*.ts). The order is the order answers and the CLI show them in.
 */
export const READINESS_MODULES = [
  'device_identity_fp',
  'peer_sidecar',
  'hermes_mesh',
  'mcp_health',
  'cross_a2a_federation',
  'depth_fusion',
  'recorder',
  'playback',
  'snapshot',
  'onvif',
  'rtsp',
] as const;
export type ReadinessModule = (typeof READINESS_MODULES)[number];

/** A device's or the fleet's grade. */
export const GRADES = ['ready', 'degraded', 'not_ready'] as const;
export const GradeSchema = z.enum(GRADES);
export type Grade = z.infer<typeof GradeSchema>;

/** A module's grade: `not_applicable` (with why) when the device does not carry what it grades; it never lowers a grade. */
export const ModuleGradeSchema = z.enum([...GRADES, 'not_applicable']);
export type ModuleGrade = z.infer<typeof ModuleGradeSchema>;

export const EvidenceSchema = z.object({
  checked: z.string().describe('what was checked'),
  at: z.string().describe('when (ISO 8601)'),
  value: z.unknown().describe('the value seen (null when nothing could be seen)'),
  reason: z.string().nullable().describe('why it is not ready, degraded or not applicable; null when ready'),
});
export type Evidence = z.infer<typeof EvidenceSchema>;

export const ModuleResultSchema = z.object({ grade: ModuleGradeSchema, evidence: EvidenceSchema });
export type ModuleResult = z.infer<typeof ModuleResultSchema>;

export const FieldCheckSchema = z.object({ ok: z.boolean(), value: z.unknown(), reason: z.string().nullable() });
export type FieldCheck = z.infer<typeof FieldCheckSchema>;

export type EnrichmentField = (typeof READINESS_ENRICHMENT_FIELDS)[number];

/** The five-minute check of spec 01: the enrichment fields of get_system_health, each asserted. */
export const FiveMinuteCheckSchema = z.object({
  passed: z.boolean(),
  fields: z.record(z.enum(READINESS_ENRICHMENT_FIELDS), FieldCheckSchema),
});
export type FiveMinuteCheck = z.infer<typeof FiveMinuteCheckSchema>;

/** One device's grades as the hub stores them in its shared state (scope `readiness`, key = device id). */
export const DeviceReadinessSchema = z.object({
  device_id: z.string(),
  grade: GradeSchema,
  reason: z.string().nullable().describe('the modules that keep it from ready, with their reasons; null when ready'),
  checked_at: z.string(),
  /** Which hub replica ran the check. */
  checked_by: z.string(),
  modules: z.record(z.enum(READINESS_MODULES), ModuleResultSchema),
  five_minute_check: FiveMinuteCheckSchema,
  /** What needs the operator without lowering its grade: its certificate ends within 30 days (or has ended). Absent in grades stored before. */
  warnings: z.array(z.string()).optional(),
});
export type DeviceReadiness = z.infer<typeof DeviceReadinessSchema>;

/** A stored grade as the routes show it: with its age, and stale once no check has refreshed it for two rounds. */
export const DeviceReadinessViewSchema = DeviceReadinessSchema.extend({
  age_s: z.number().int(),
  stale: z.boolean().describe('older than two check intervals (and a check timeout): the checks stopped reaching it'),
});
export type DeviceReadinessView = z.infer<typeof DeviceReadinessViewSchema>;

const CountsSchema = z.object({ ready: z.number().int(), degraded: z.number().int(), not_ready: z.number().int() });
const ModuleCountsSchema = CountsSchema.extend({ not_applicable: z.number().int() });

export const CertificateExpirySchema = z.object({
  name: z.string().describe('what it is for: hub HTTPS server, hub client, fleet CA'),
  path: z.string(),
  notAfter: z.string().nullable().describe('its end (ISO 8601); null when it cannot be read'),
  daysLeft: z.number().int().nullable(),
  state: z.enum(['ok', 'expiring', 'expired', 'missing', 'unreadable']).describe('expiring: fewer than 30 days left'),
  problem: z.string().optional(),
});

export const FleetGradeSchema = z.object({
  grade: GradeSchema.describe('ready: every device ready; not_ready: no device ready or degraded (or none known); degraded otherwise'),
  reason: z.string().nullable(),
  device_count: z.number().int(),
  by_grade: CountsSchema,
  /** Devices the hub knows (registry, bus) that no check has graded yet; counted as not_ready. */
  unchecked: z.array(z.string()),
  stale: z.array(z.string()),
  modules: z.record(z.enum(READINESS_MODULES), ModuleCountsSchema),
  certificates: z.array(CertificateExpirySchema).describe('the hub’s own certificates (HTTPS server, client, fleet CA) with their days left'),
  warnings: z
    .array(z.string())
    .describe(
      'what needs the operator without lowering the grade: a hub or device certificate that ends within 30 days, has ended or cannot be read (renew with lookout certs)',
    ),
});
export type FleetGrade = z.infer<typeof FleetGradeSchema>;
