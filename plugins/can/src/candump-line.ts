/** One CAN frame as candump's log format (`candump -L`, also what `canplayer` reads) writes it. */
export interface CanFrame {
  /** Seconds since the epoch, from the kernel's receive timestamp. */
  time: number;
  iface: string;
  id: number;
  /** 29-bit (8 hex digits) rather than 11-bit (3 hex digits) identifier. */
  extended: boolean;
  /** The CAN error flag is set in the id: a bus error report, not data. */
  error: boolean;
  remote: boolean;
  data: Uint8Array;
}

const CAN_ERR_FLAG = 0x20000000;
/** `(1700000000.123456) can0 18FEF100#FF00...`; CAN FD frames `##<flags nibble><data>`. */
const LINE = /^\((\d{1,12}\.\d{1,9})\)\s+([A-Za-z0-9_.-]{1,15})\s+([0-9A-Fa-f]{3}|[0-9A-Fa-f]{8})(?:##[0-9A-Fa-f]|#)(R\d?|(?:[0-9A-Fa-f]{2}){0,64})\s*$/;
/** A log line is at most this long (64 data bytes of CAN FD plus the header): longer is not candump's. */
export const MAX_LINE = 200;

/** Parses one log line; null when it is not a frame line (blank, a comment, garbage). */
export function parseCandumpLine(line: string): CanFrame | null {
  if (line.length > MAX_LINE) return null;
  const m = LINE.exec(line.trim());
  if (!m) return null;
  const id = parseInt(m[3], 16);
  const remote = m[4].startsWith('R');
  const hex = remote ? '' : m[4];
  const data = new Uint8Array(hex.length / 2);
  for (let i = 0; i < data.length; i++) data[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  const extended = m[3].length === 8;
  return { time: Number(m[1]), iface: m[2], id: extended ? id & 0x1fffffff : id, extended, error: extended && (id & CAN_ERR_FLAG) !== 0, remote, data };
}
