import { createHmac, sign, timingSafeEqual, type KeyObject } from 'node:crypto';
import { DeviceIdSchema, PortSchema } from 'lookout/core/contracts';
import { z } from 'lookout/core';

/**
 * The mesh's two frames (protocol 2; docs/peer-mesh.md):
 *
 * - `LKM2` sealed: `LKM2` | id length (1) | sender id | HMAC-SHA256(pair key, everything but the MAC) (32) | JSON.
 *   Heartbeats and acks, under the key only the two devices of the pair can derive (mesh-pair-key.ts).
 * - `LKC2` introduction: `LKC2` | id length | sender id | HMAC-SHA256(fleet mesh key, everything but the MAC) |
 *   ECDSA P-256 signature by the sender's device key (64, IEEE P1363) over everything but MAC and signature |
 *   certificate length (2) | the sender's device certificate (DER) | JSON. How a device proves who it is to a
 *   peer that has no pair key with it yet: the certificate binds the id to a key the fleet CA vouched for.
 *
 * The sender id is in clear ahead of the MAC so that a receiver finds the key to check with, or refuses a
 * sender it does not know, before computing anything: an id not in its peer table costs no HMAC at all.
 * Protocol 1 (`LKM1`, one fleet-wide HMAC key for every datagram) let any device sign as any other; its
 * datagrams are now malformed.
 */
export const SEALED_MAGIC = Buffer.from('LKM2', 'latin1');
export const INTRO_MAGIC = Buffer.from('LKC2', 'latin1');
export const MAC_BYTES = 32;
export const SIGNATURE_BYTES = 64;
/** Datagrams stay under the smallest common path MTU, so none is ever fragmented. */
export const MAX_DATAGRAM_BYTES = 1200;

export const MESH_MESSAGE_TYPES = ['hello', 'hb', 'ack'] as const;

/** The JSON of a mesh datagram (plan "Wire decisions"). */
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
  /** hello only: whether the sender already holds the receiver's certificate (false asks for an introduction back). */
  known: z.boolean().optional(),
  mesh_port: PortSchema,
  sidecar_port: PortSchema.nullable(),
});
export type MeshMessage = z.infer<typeof MeshMessageSchema>;

/** Why a datagram was not accepted; each has its counter. */
export type DropReason = 'bad_signature' | 'bad_certificate' | 'stale' | 'replayed' | 'malformed' | 'unknown_sender' | 'misaddressed' | 'foreign_address';

/** A frame split into its parts; nothing in it is checked yet but its framing. */
export type Frame =
  | { kind: 'sealed'; sender: string; signed: readonly Buffer[]; mac: Buffer; json: Buffer }
  | { kind: 'intro'; sender: string; signed: readonly Buffer[]; mac: Buffer; signature: Buffer; toSign: Buffer; certificate: Buffer; json: Buffer };

/** Splits a datagram into its frame: no crypto, no JSON; null when it is not a well-formed frame. */
export function readFrame(datagram: Buffer): Frame | null {
  if (datagram.length > MAX_DATAGRAM_BYTES || datagram.length < 6) return null;
  const magic = datagram.subarray(0, 4);
  const sealed = magic.equals(SEALED_MAGIC);
  if (!sealed && !magic.equals(INTRO_MAGIC)) return null;
  const idLength = datagram[4];
  const macAt = 5 + idLength;
  if (idLength === 0 || idLength > 128 || datagram.length < macAt + MAC_BYTES + 2) return null;
  const sender = datagram.toString('utf8', 5, macAt);
  const header = datagram.subarray(0, macAt);
  const mac = datagram.subarray(macAt, macAt + MAC_BYTES);
  const rest = datagram.subarray(macAt + MAC_BYTES);
  // What the MAC covers, in its two parts (hashed one after the other: no copy per datagram).
  const signed = [header, rest];
  if (sealed) return { kind: 'sealed', sender, signed, mac, json: rest };
  if (rest.length < SIGNATURE_BYTES + 2) return null;
  const signature = rest.subarray(0, SIGNATURE_BYTES);
  const certLength = rest.readUInt16BE(SIGNATURE_BYTES);
  const certAt = SIGNATURE_BYTES + 2;
  if (certLength === 0 || rest.length <= certAt + certLength) return null;
  const certificate = rest.subarray(certAt, certAt + certLength);
  const json = rest.subarray(certAt + certLength);
  const toSign = Buffer.concat([header, rest.subarray(SIGNATURE_BYTES)]);
  return { kind: 'intro', sender, signed, mac, signature, toSign, certificate, json };
}

/** Whether `mac` is HMAC-SHA256(key, the parts of `signed` in order), in constant time. */
export function macMatches(key: Buffer, signed: readonly Buffer[], mac: Buffer): boolean {
  const hmac = createHmac('sha256', key);
  for (const part of signed) hmac.update(part);
  return timingSafeEqual(hmac.digest(), mac);
}

/** The JSON of a frame whose MAC held: parsed and checked against the schema and the id in the header. */
export function parseMessage(json: Buffer, sender: string, kind: Frame['kind']): MeshMessage | null {
  let body: unknown;
  try {
    body = JSON.parse(json.toString('utf8'));
  } catch {
    return null;
  }
  const parsed = MeshMessageSchema.safeParse(body);
  if (!parsed.success || parsed.data.from !== sender) return null;
  const m = parsed.data;
  // Introductions are hellos; sealed frames are heartbeats and acks (an ack names what it answers).
  if (kind === 'intro' ? m.t !== 'hello' : m.t === 'hello' || (m.t === 'ack' && m.echo === undefined)) return null;
  return m;
}

function header(magic: Buffer, from: string): Buffer {
  const id = Buffer.from(from, 'utf8');
  if (id.length === 0 || id.length > 128) throw new RangeError(`a mesh sender id is 1 to 128 bytes, not ${id.length}`);
  return Buffer.concat([magic, Buffer.from([id.length]), id]);
}

function fits(out: Buffer): Buffer {
  if (out.length > MAX_DATAGRAM_BYTES) throw new RangeError(`mesh datagram of ${out.length} bytes exceeds ${MAX_DATAGRAM_BYTES}`);
  return out;
}

/** A heartbeat or ack under the pair key. Throws when it would not fit one datagram. */
export function encodeSealed(message: MeshMessage, pairKey: Buffer): Buffer {
  const head = header(SEALED_MAGIC, message.from);
  const json = Buffer.from(JSON.stringify(message), 'utf8');
  const mac = createHmac('sha256', pairKey).update(head).update(json).digest();
  return fits(Buffer.concat([head, mac, json]));
}

/** A hello carrying the sender's certificate, signed by its device key, under the fleet mesh key. */
export function encodeIntroduction(message: MeshMessage, o: { fleetKey: Buffer; certificate: Buffer; privateKey: KeyObject }): Buffer {
  const head = header(INTRO_MAGIC, message.from);
  const certLength = Buffer.alloc(2);
  certLength.writeUInt16BE(o.certificate.length);
  const json = Buffer.from(JSON.stringify(message), 'utf8');
  const tail = Buffer.concat([certLength, o.certificate, json]);
  const signature = sign('sha256', Buffer.concat([head, tail]), { key: o.privateKey, dsaEncoding: 'ieee-p1363' });
  const mac = createHmac('sha256', o.fleetKey).update(head).update(signature).update(tail).digest();
  return fits(Buffer.concat([head, mac, signature, tail]));
}
