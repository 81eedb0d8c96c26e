const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** How deep a request body, tool arguments or a command may nest: far beyond any real one. */
export const MAX_REQUEST_JSON_DEPTH = 64;

/**
 * True when the JSON text nests objects/arrays deeper than `max`. Checked on the bytes before
 * parsing: a deeply nested value that passes a loose schema would later overflow the stack of
 * JSON.stringify when the cache is served, so it must never be stored.
 */
export function jsonDeeperThan(bytes: Uint8Array, max: number): boolean {
  // Most messages hold a handful of brackets: too few to nest past `max`, counted with native
  // searches (several times faster than walking every byte in JavaScript).
  if (Buffer.isBuffer(bytes) && fewerOpeningsThan(bytes, max + 1)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--;
  }
  return false;
}

function fewerOpeningsThan(buf: Buffer, limit: number): boolean {
  let n = 0;
  for (const ch of [OPEN_BRACE, OPEN_BRACKET]) {
    let i = buf.indexOf(ch);
    while (i !== -1) {
      if (++n >= limit) return false;
      i = buf.indexOf(ch, i + 1);
    }
  }
  return true;
}
