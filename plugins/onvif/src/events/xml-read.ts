import type { Element } from '@xmldom/xmldom';

/** Element children of `el`, in order (text, comments and processing instructions skipped). */
export function childElements(el: Element): Element[] {
  const out: Element[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) out.push(n as Element);
  return out;
}

/**
 * The first child element with this local name. Clients mix prefixes and default namespaces, so
 * requests are matched on local names; `ns`, when given, must match too.
 */
export function child(el: Element, localName: string, ns?: string): Element | undefined {
  return childElements(el).find((c) => c.localName === localName && (ns === undefined || c.namespaceURI === ns));
}

/** The trimmed text content of an element, or undefined when the element is absent or empty. */
export function textOf(el: Element | undefined): string | undefined {
  const text = el?.textContent?.trim();
  return text ? text : undefined;
}
