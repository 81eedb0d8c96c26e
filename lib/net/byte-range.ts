/** One byte range of a file, both ends inclusive (as Content-Range writes them). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * The `Range` header of a request against a file of `size` bytes (RFC 9110 §14): undefined when
 * there is none or it is not a single bytes range we serve (the whole file is then answered, as
 * the RFC allows for a range a server ignores), 'unsatisfiable' when it lies outside the file.
 * Several ranges (`bytes=0-1,5-9`) are answered with the whole file: players ask for one.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  // Past 2^53 a number is not exact: no file here is that large, so such a range is outside it.
  if (m[1].length > 15 || m[2].length > 15) return 'unsatisfiable';
  if (m[1] === '') {
    // A suffix: the last N bytes.
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return undefined; // invalid syntax: ignored
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
