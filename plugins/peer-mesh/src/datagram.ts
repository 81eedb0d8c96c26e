import { createHmac, timingSafeEqual } from 'node:crypto';
import { DeviceIdSchema, PortSchema, z } from 'lookout/core';

/** `LKM1`: what every mesh datagram starts with (a stray packet from anything else fails here, before the MAC). */
export const MESH_MAGIC = Buffer.from('LKM1', 'latin1');
export const MAC_BYTES = 32;
const HEADER_BYTES = MESH_MAGIC.length + MAC_BYTES;
/** Datagrams stay under the smallest common path MTU, so none is ever fragmented. */
export const MAX_DATAGRAM_BYTES = 1200;

export const MESH_MESSAGE_TYPES = ['hello', 'hb', 'ack'] as const;

/** The signed JSON of a mesh datagram (plan "Wire decisions"). */
export const MeshMessageSchema = z.object({
  t: z.enum(MESH_MESSAGE_TYPES),
  from: DeviceIdSchema.max(128),
  /** The device it is meant for: signed, so a datagram captured on its way to one peer is refused by every other. */
  to: DeviceIdSchema.max(128),
  /** Strictly increasing per sender process and boot. */
  seq: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  /** Sender's clock, ms since the epoch. */
  ts: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  /** Random id of the sender's start: its sequence begins again with a new boot. */
  boot: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .describe('random id per start'),
  /** ack only: the seq of the heartbeat it answers. */
  echo: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  mesh_port: PortSchema,
  sidecar_port: PortSchema.nullable(),
});
export type MeshMessage = z.infer<typeof MeshMessageSchema>;

/** Why a datagram was not accepted; each has its counter. */
export type DropReason = 'bad_signature' | 'stale' | 'replayed' | 'malformed' | 'unknown_sender' | 'misaddressed' | 'foreign_address';

export type Decoded = { ok: true; message: MeshMessage } | { ok: false; reason: 'bad_signature' | 'malformed' };

/** `LKM1` + HMAC-SHA256(key, json) + json. Throws when the message would not fit one datagram (a device id that long is refused earlier). */
export function encodeDatagram(message: MeshMessage, key: Buffer): Buffer {
  const json = Buffer.from(JSON.stringify(message), 'utf8');
  const out = Buffer.concat([MESH_MAGIC, createHmac('sha256', key).update(json).digest(), json]);
  if (out.length > MAX_DATAGRAM_BYTES) throw new RangeError(`mesh datagram of ${out.length} bytes exceeds ${MAX_DATAGRAM_BYTES}`);
  return out;
}

/**
 * Framing, then the MAC (constant time), and only then JSON and fields: bytes nobody with the key
 * signed are never parsed. Freshness and order are the replay guard's job.
 */
export function decodeDatagram(datagram: Buffer, key: Buffer): Decoded {
  if (datagram.length > MAX_DATAGRAM_BYTES || datagram.length <= HEADER_BYTES) return { ok: false, reason: 'malformed' };
  if (!datagram.subarray(0, MESH_MAGIC.length).equals(MESH_MAGIC)) return { ok: false, reason: 'malformed' };
  const json = datagram.subarray(HEADER_BYTES);
  const expected = createHmac('sha256', key).update(json).digest();
  if (!timingSafeEqual(expected, datagram.subarray(MESH_MAGIC.length, HEADER_BYTES))) return { ok: false, reason: 'bad_signature' };
  let body: unknown;
  try {
    body = JSON.parse(json.toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const parsed = MeshMessageSchema.safeParse(body);
  if (!parsed.success) return { ok: false, reason: 'malformed' };
  if (parsed.data.t === 'ack' && parsed.data.echo === undefined) return { ok: false, reason: 'malformed' };
  return { ok: true, message: parsed.data };
}
