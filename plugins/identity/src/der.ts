/**
 * The few ASN.1 DER encodings an X.509 certificate needs (ITU-T X.690). Small on purpose: Node
 * signs and parses certificates but does not build them, and the device has no other need.
 */
export function tlv(tag: number, content: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export const sequence = (...parts: Uint8Array[]): Buffer => tlv(0x30, Buffer.concat(parts));
export const set = (...parts: Uint8Array[]): Buffer => tlv(0x31, Buffer.concat(parts));
export const octetString = (content: Uint8Array): Buffer => tlv(0x04, content);
export const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const boolean = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
/** `[n] EXPLICIT` (constructed, context-specific). */
export const explicit = (n: number, content: Uint8Array): Buffer => tlv(0xa0 | n, content);
/** `[n] IMPLICIT` of a primitive type (context-specific), e.g. GeneralName choices. */
export const implicitPrimitive = (n: number, content: Uint8Array): Buffer => tlv(0x80 | n, content);

/** A non-negative INTEGER from its big-endian magnitude (a leading 0 keeps it positive). */
export function unsignedInteger(magnitude: Uint8Array): Buffer {
  let bytes = Buffer.from(magnitude);
  while (bytes.length > 1 && bytes[0] === 0 && (bytes[1] & 0x80) === 0) bytes = bytes.subarray(1);
  if (bytes[0] & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(0x02, bytes);
}

export const smallInteger = (n: number): Buffer => unsignedInteger(Buffer.from([n]));

/** BIT STRING with no unused bits (keys and signatures are whole bytes). */
export const bitString = (content: Uint8Array): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), content]));

export function objectIdentifier(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out: number[] = [arcs[0] * 40 + arcs[1]];
  for (const arc of arcs.slice(2)) {
    const chunk: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050. */
export function time(date: Date): Buffer {
  const iso = date.toISOString();
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '');
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}
