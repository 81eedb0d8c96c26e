import { DOMParser, onErrorStopParsing, type Element } from '@xmldom/xmldom';
import { NS } from './namespaces.js';

/** A WS-Discovery Probe as the responder needs it. */
export interface Probe {
  messageId: string;
  /** The probed types as namespace URI and local name (the namespace null when its prefix is undeclared). */
  types: { ns: string | null; local: string }[];
  scopes: string[];
  /** The Scopes MatchBy rule (default RFC 3986). */
  matchBy: string | null;
}

// WS-Addressing as clients send it: 2004/08 (WS-Discovery 2005/04), some the 2005/08 recommendation.
const ADDRESSING = new Set<string>([NS.wsa04, NS.wsa]);

/**
 * Reads a datagram as a SOAP 1.2 WS-Discovery Probe, namespace-aware (clients mix default
 * namespaces and arbitrary prefixes). Anything else (another message, malformed XML, a DOCTYPE,
 * a Probe without MessageID) is null: the responder ignores it without answering.
 */
export function parseProbe(text: string): Probe | null {
  // No DTD is needed by any discovery message; refusing it keeps entity tricks out of the parser.
  if (/<!DOCTYPE/i.test(text)) return null;
  let root: Element | null;
  try {
    root = new DOMParser({ onError: onErrorStopParsing }).parseFromString(text, 'text/xml').documentElement;
  } catch {
    return null;
  }
  if (!root || root.namespaceURI !== NS.env || root.localName !== 'Envelope') return null;
  const header = child(root, NS.env, 'Header');
  const body = child(root, NS.env, 'Body');
  const probe = body ? child(body, NS.wsd, 'Probe') : null;
  if (!header || !probe) return null;
  const idElement = children(header).find((e) => e.localName === 'MessageID' && ADDRESSING.has(e.namespaceURI ?? ''));
  const messageId = idElement?.textContent?.trim();
  if (!messageId || messageId.length > 256) return null;

  const typesElement = child(probe, NS.wsd, 'Types');
  const types = words(typesElement?.textContent).map((qname) => {
    const colon = qname.indexOf(':');
    if (colon < 0) return { ns: typesElement!.lookupNamespaceURI(null), local: qname };
    return { ns: typesElement!.lookupNamespaceURI(qname.slice(0, colon)), local: qname.slice(colon + 1) };
  });
  const scopesElement = child(probe, NS.wsd, 'Scopes');
  return { messageId, types, scopes: words(scopesElement?.textContent), matchBy: scopesElement?.getAttribute('MatchBy') || null };
}

function words(text: string | null | undefined): string[] {
  return (text ?? '').split(/\s+/).filter(Boolean);
}

function children(parent: Element): Element[] {
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) out.push(n as Element);
  return out;
}

function child(parent: Element, ns: string, local: string): Element | null {
  return children(parent).find((e) => e.namespaceURI === ns && e.localName === local) ?? null;
}
