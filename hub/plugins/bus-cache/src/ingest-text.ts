/**
 * At most `max` characters, as a string of their own: V8 makes a slice a view that keeps the
 * whole original alive, which for a long topic or issue is what the cut was meant to drop.
 */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : Buffer.from(`${text.slice(0, max - 1)}\u2026`).toString();
}

/** The device id of a `devices/<id>/…` topic (cut to 128), or undefined. */
export function deviceOf(topic: string): string | undefined {
  const parts = topic.split('/', 3);
  return parts[0] === 'devices' && parts[1] ? parts[1].slice(0, 128) : undefined;
}

/** What follows `devices/<id>/` (cut to 128), or "(none)". */
export function suffixOf(topic: string): string {
  const parts = topic.split('/');
  return parts.slice(2).join('/').slice(0, 128) || '(none)';
}

/** The first bytes as text, control characters shown as dots: enough to recognise a payload. */
export function preview(payload: Buffer): string {
  return (
    payload
      .subarray(0, 96)
      .toString('utf8')
      // eslint-disable-next-line no-control-regex -- control characters are exactly what a preview must not print
      .replace(/[\u0000-\u001f\u007f-\u009f\ufffd]/g, '.')
  );
}
