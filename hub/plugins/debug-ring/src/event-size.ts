/**
 * What the ring keeps of one event, and what it weighs. Details are kept as their JSON text: its
 * length is what the event costs, and the ring holds no reference into the caller's objects (a
 * health message's storage summary would otherwise live as long as the event that quoted it).
 */
export interface Sized {
  message: string;
  details?: string;
  bytes: number;
}

const MAX_MESSAGE_CHARS = 1024;
const PREVIEW_CHARS = 512;
/** Per event, besides its strings: the record, its numbers and the map entries around it. */
const OVERHEAD_BYTES = 96;

/** The event's message and details, cut so that it weighs at most `maxEventBytes`. */
export function sizeEvent(message: string, details: unknown, extra: number, maxEventBytes: number): Sized {
  const msg = message.length > MAX_MESSAGE_CHARS ? own(`${message.slice(0, MAX_MESSAGE_CHARS - 1)}\u2026`) : message;
  const fixed = OVERHEAD_BYTES + extra + Buffer.byteLength(msg);
  if (details === undefined) return { message: msg, bytes: fixed };
  let json: string;
  try {
    json = JSON.stringify(details) ?? 'null';
  } catch (err) {
    json = JSON.stringify({ unserialisable: (err as Error).message.slice(0, 200) });
  }
  let bytes = fixed + Buffer.byteLength(json);
  if (bytes > maxEventBytes) {
    const original = Buffer.byteLength(json);
    json = JSON.stringify({ truncated: true, original_bytes: original, preview: own(json.slice(0, PREVIEW_CHARS)) });
    bytes = fixed + Buffer.byteLength(json);
  }
  return { message: msg, details: json, bytes };
}

/** A copy of its own: V8 may keep a slice as a view of the whole original, which the cut was meant to free. */
function own(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
