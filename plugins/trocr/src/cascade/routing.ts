import type { TrocrConfig } from '../config.js';

/** Spec 02: SVC_DEVICE_ID must contain this for precision-role routing. */
export const PRECISION_ROUTE = 'shadow2';

export interface Routing {
  svc_device_id: string | null;
  precision_role: boolean;
  encode_only: boolean;
  /** Why the cascade does not run here; null when the configuration lets it. */
  idleReason: string | null;
}

/** Whether the configuration routes text recognition to this device (precision role, camera shared with neural work). */
export function routingOf(config: Pick<TrocrConfig, 'SVC_DEVICE_ID' | 'EDGE_V3_ENCODE_ONLY'>): Routing {
  const id = config.SVC_DEVICE_ID?.trim() || null;
  const precision = id !== null && id.includes(PRECISION_ROUTE);
  const encodeOnly = config.EDGE_V3_ENCODE_ONLY === '1';
  let idleReason: string | null = null;
  if (!precision) {
    idleReason =
      id === null
        ? `SVC_DEVICE_ID is not set: the text cascade runs only on the precision role (SVC_DEVICE_ID containing ${PRECISION_ROUTE})`
        : `SVC_DEVICE_ID=${id} does not contain ${PRECISION_ROUTE}: the text cascade runs only on the precision role`;
  } else if (encodeOnly) {
    idleReason = 'EDGE_V3_ENCODE_ONLY=1 reserves the camera for the encoder: set it to 0 to share the camera with the detector and the text cascade';
  }
  return { svc_device_id: id, precision_role: precision, encode_only: encodeOnly, idleReason };
}
