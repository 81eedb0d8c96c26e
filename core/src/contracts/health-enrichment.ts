import { z } from 'zod';
import { DevicePortsSchema } from './device-ports.js';
import { ToolCallResponseSchema } from './tool-call.js';

/**
 * Fields the hub injects, best effort, into get_system_health / get_device_health answers and their
 * inner `result` (spec 01, "Health enrichment"). What could not be obtained is null and named in
 * `_vms_enrichment_missing`; the answer stays intact.
 */
export const HealthEnrichmentSchema = z
  .looseObject({
    cert_fingerprint: z.string().min(1).nullable().describe('non-null when identity is available'),
    peer_mesh: z.looseObject({}).nullable().describe('peer-mesh status object'),
    cert_fingerprint_present: z.boolean(),
    peer_comm_status: z.string().min(1).nullable(),
    listen_ports: DevicePortsSchema.nullable(),
    overlay_mount: z.string().min(1).nullable().describe('writable overlay mount point, null when none'),
    _vms_enriched: z.boolean().describe('true when enrichment ran'),
    _vms_enrichment_missing: z.array(z.string().min(1)).optional().describe('fields that could not be obtained, with why'),
  })
  .describe('health enrichment fields (spec 01)');
/** The health enrichment fields as parsed (see HealthEnrichmentSchema). */
export type HealthEnrichment = z.infer<typeof HealthEnrichmentSchema>;

/** The fields the five-minute readiness check asserts. */
export const READINESS_ENRICHMENT_FIELDS = ['peer_comm_status', 'peer_mesh', 'listen_ports', 'overlay_mount', 'cert_fingerprint_present'] as const;

/** A successful, enriched tools/call answer for get_system_health or get_device_health. */
export const EnrichedHealthResponseSchema = ToolCallResponseSchema.extend(HealthEnrichmentSchema.shape)
  .extend({ result: HealthEnrichmentSchema })
  .describe('tools/call answer of a health tool, enriched');
/** An enriched health tool answer as parsed (see EnrichedHealthResponseSchema). */
export type EnrichedHealthResponse = z.infer<typeof EnrichedHealthResponseSchema>;
