/**
 * Whether `text` opens more than `max` elements, counted without parsing: every `<` followed by a
 * name start character. Comments, CDATA and processing instructions are not counted (`<!`, `<?`)
 * and a `<` inside an attribute value is an error to the parser anyway, so the count never
 * undercounts what the parser would build. One pass over the bytes, no allocation: cheap enough to
 * run on a stranger's body before the XML parser sees it.
 */
export function exceedsElementBudget(text: string, max: number): boolean {
  let count = 0;
  for (let i = text.indexOf('<'); i !== -1; i = text.indexOf('<', i + 1)) {
    const c = text.charCodeAt(i + 1);
    // A-Z, a-z, "_", ":" or any non-ASCII name start.
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 58 || c >= 128) {
      if (++count > max) return true;
    }
  }
  return false;
}
