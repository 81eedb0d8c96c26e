/** The fields of a 29-bit J1939 identifier (SAE J1939-21). */
export interface J1939Id {
  priority: number;
  /** Parameter group number: PDU1 (PF < 240) clears the PS byte, which is then the destination. */
  pgn: number;
  source_address: number;
  /** 255 (global) for PDU2 groups, the PS byte for PDU1 groups. */
  destination_address: number;
}

/** Largest 29-bit identifier. */
export const MAX_EXTENDED_ID = 0x1fffffff;

/** Splits a 29-bit identifier into priority, PGN (PDU1/PDU2 rules), destination and source address. */
export function decodeJ1939Id(id: number): J1939Id {
  if (!Number.isInteger(id) || id < 0 || id > MAX_EXTENDED_ID) throw new RangeError(`not a 29-bit CAN identifier: ${id}`);
  const priority = (id >>> 26) & 0x7;
  const edpDp = (id >>> 24) & 0x3;
  const pf = (id >>> 16) & 0xff;
  const ps = (id >>> 8) & 0xff;
  const source_address = id & 0xff;
  // PDU1 (PF 0..239) is addressed: PS is the destination and not part of the group number.
  const pdu1 = pf < 240;
  const pgn = (edpDp << 16) | (pf << 8) | (pdu1 ? 0 : ps);
  return { priority, pgn, source_address, destination_address: pdu1 ? ps : 0xff };
}
