/**
 * How a J1939 parameter is read from a frame's data and whether its raw value is a reading at all
 * (SAE J1939-71 ranges: the top byte of a field above 0xFA marks it reserved, 0xFE..: error
 * indicator, 0xFF..: not available; 2- and 4-bit fields use their two top codes the same way).
 */
export type ParameterState = 'valid' | 'not_available' | 'error' | 'reserved';

export interface FieldSpec {
  /** First byte, counted from 1 as the standard does. */
  byte: number;
  /** Bit within that byte where the field starts, counted from 1 (least significant); default 1. */
  bit?: number;
  /** Width in bits: 2, 4, 8, 16, 24 or 32. */
  bits: number;
}

/** The raw little-endian value of a field, or undefined when the frame is too short to hold it. */
export function rawField(data: Uint8Array, f: FieldSpec): number | undefined {
  const start = f.byte - 1;
  if (f.bits < 8) {
    if (start >= data.length) return undefined;
    return (data[start] >>> ((f.bit ?? 1) - 1)) & ((1 << f.bits) - 1);
  }
  const bytes = f.bits / 8;
  if (start + bytes > data.length) return undefined;
  let v = 0;
  for (let i = bytes - 1; i >= 0; i--) v = v * 256 + data[start + i];
  return v;
}

/** Valid, error or not available, from the field's width and raw value. */
export function rawState(raw: number, bits: number): ParameterState {
  if (bits < 8) {
    const top = (1 << bits) - 1;
    if (raw === top) return 'not_available';
    if (raw === top - 1) return 'error';
    return 'valid';
  }
  const msb = Math.floor(raw / 2 ** (bits - 8));
  if (msb === 0xff) return 'not_available';
  if (msb === 0xfe) return 'error';
  if (msb > 0xfa) return 'reserved';
  return 'valid';
}
