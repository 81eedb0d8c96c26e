import { DevicePortsSchema } from 'lookout/core/contracts';
import type { RegisteredDevice } from '../../registry/src/service.js';
import { isObject } from 'lookout/core';
import type { ToolOutcome } from './tool-outcome.js';

/** Tools whose answers the hub enriches (spec 01, "Health enrichment"). */
export const ENRICHED_TOOLS = new Set(['get_system_health', 'get_device_health']);
export const IDENTITY_TOOL = 'get_device_identity';
export const PEER_MESH_TOOL = 'get_peer_mesh_status';

/** A helper call's outcome, or why there is none (the device failed, timed out, lacks the tool). */
export type AuxOutcome = ToolOutcome | { status: 'failed'; error: string };

export interface Enrichment {
  cert_fingerprint: string | null;
  peer_mesh: Record<string, unknown> | null;
  cert_fingerprint_present: boolean;
  peer_comm_status: string | null;
  listen_ports: Record<string, unknown> | null;
  overlay_mount: string | null;
  _vms_enriched: true;
  _vms_enrichment_missing?: string[];
}

/**
 * Best effort: each field comes from get_device_identity or get_peer_mesh_status when they
 * answered, else from the health answer itself, else from what the registry knows; a field
 * nobody could give is null and said in `_vms_enrichment_missing` with why. The device's answer
 * keeps every field it had; these are added beside them, at the top and in `result`.
 */
export function enrichment(health: Record<string, unknown>, identity: AuxOutcome, mesh: AuxOutcome, device: RegisteredDevice): Enrichment {
  const missing: string[] = [];
  const id = identity.status === 'ok' && isObject(identity.result) ? identity.result : undefined;
  const peer = mesh.status === 'ok' && isObject(mesh.result) ? mesh.result : undefined;
  const why = (o: AuxOutcome, tool: string) => (o.status === 'ok' ? `${tool} answered no object` : `${tool} failed: ${o.error}`);

  const cert_fingerprint = str(id?.cert_fingerprint) ?? str(id?.fingerprint) ?? str(health.cert_fingerprint) ?? null;
  if (cert_fingerprint === null) missing.push(`cert_fingerprint: ${id ? 'the device reports no certificate' : why(identity, IDENTITY_TOOL)}`);
  const cert_fingerprint_present = cert_fingerprint !== null || id?.cert_fingerprint_present === true || health.cert_fingerprint_present === true;

  const peer_mesh = peer ?? (isObject(health.peer_mesh) ? health.peer_mesh : null);
  if (peer_mesh === null) missing.push(`peer_mesh: ${why(mesh, PEER_MESH_TOOL)}`);
  const peer_comm_status = str(peer?.peer_comm_status) ?? str(peer?.status) ?? str(peer?.state) ?? str(health.peer_comm_status) ?? null;
  if (peer_comm_status === null) missing.push(`peer_comm_status: ${peer ? `${PEER_MESH_TOOL} reports no status` : why(mesh, PEER_MESH_TOOL)}`);

  const listen_ports = ports(id?.listen_ports) ?? ports(health.listen_ports) ?? ports(device.ports) ?? null;
  if (listen_ports === null) missing.push(`listen_ports: ${id ? 'not reported by the device' : why(identity, IDENTITY_TOOL)}`);

  const overlay_mount = str(id?.overlay_mount) ?? str(health.overlay_mount) ?? str(peer?.overlay_mount) ?? null;
  if (overlay_mount === null) missing.push('overlay_mount: not reported by the device');

  const out: Enrichment = { cert_fingerprint, peer_mesh, cert_fingerprint_present, peer_comm_status, listen_ports, overlay_mount, _vms_enriched: true };
  if (missing.length > 0) out._vms_enrichment_missing = missing;
  return out;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function ports(v: unknown): Record<string, unknown> | undefined {
  const parsed = DevicePortsSchema.safeParse(v);
  return parsed.success ? parsed.data : undefined;
}
