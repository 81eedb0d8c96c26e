import { DOMParser, type Element } from '@xmldom/xmldom';
import { NS } from './namespaces.js';
import { faults } from './soap-fault.js';

/** A parsed SOAP request: the Header (or null) and the one element inside Body. */
export interface SoapRequest {
  header: Element | null;
  body: Element;
  /** Local name of the body element: the action (GetProfiles, CreatePullPointSubscription…). */
  action: string;
  /** Namespace URI of the body element ('' when none). */
  namespace: string;
}

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';

/**
 * Parses a request namespace-aware and matches elements by namespace URI and local name, whatever
 * prefixes the client chose. Anything malformed (not XML, a DTD, no Envelope, an empty Body) is a
 * ter:WellFormed fault; nothing is thrown but SoapFault.
 */
export function parseSoapRequest(text: string): SoapRequest {
  let problem: string | undefined;
  const parser = new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') problem ??= message;
    },
  });
  let doc;
  try {
    doc = parser.parseFromString(text, 'text/xml');
  } catch (err) {
    throw faults.malformed(`the request is not well-formed XML: ${firstLine((err as Error).message)}`);
  }
  if (problem !== undefined) throw faults.malformed(`the request is not well-formed XML: ${firstLine(problem)}`);
  // Entity declarations are a way to blow memory up; SOAP forbids a DTD anyway.
  if (doc.doctype) throw faults.malformed('a SOAP message carries no DTD');
  const envelope = doc.documentElement;
  if (!envelope || envelope.localName !== 'Envelope' || (envelope.namespaceURI !== NS.env && envelope.namespaceURI !== SOAP11)) {
    throw faults.malformed('the request is not a SOAP 1.2 Envelope');
  }
  const header = childElements(envelope).find((e) => e.localName === 'Header' && e.namespaceURI === envelope.namespaceURI) ?? null;
  const bodyEl = childElements(envelope).find((e) => e.localName === 'Body' && e.namespaceURI === envelope.namespaceURI);
  if (!bodyEl) throw faults.malformed('the Envelope has no Body');
  const body = childElements(bodyEl)[0];
  if (!body) throw faults.malformed('the Body is empty');
  return { header, body, action: body.localName ?? '', namespace: body.namespaceURI ?? '' };
}

function firstLine(message: string): string {
  return message.split('\n')[0].slice(0, 200);
}

/** The element children of a node, in order. */
export function childElements(node: Element): Element[] {
  const out: Element[] = [];
  for (let n = node.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) out.push(n as Element);
  return out;
}

/** The first child element of that local name (any namespace: clients disagree on prefixes and namespaces of parameters). */
export function child(node: Element | null | undefined, localName: string): Element | undefined {
  if (!node) return undefined;
  return childElements(node).find((e) => e.localName === localName);
}

/** Follows a path of local names from a node. */
export function path(node: Element | null | undefined, ...names: string[]): Element | undefined {
  let at: Element | undefined = node ?? undefined;
  for (const name of names) at = child(at, name);
  return at;
}

/** The trimmed text of a child (undefined when it is absent). */
export function text(node: Element | null | undefined, ...names: string[]): string | undefined {
  const el = names.length ? path(node, ...names) : (node ?? undefined);
  return el ? (el.textContent ?? '').trim() : undefined;
}

/** Every descendant element of that local name, document order. */
export function descendants(node: Element, localName: string): Element[] {
  const out: Element[] = [];
  const walk = (el: Element): void => {
    for (const c of childElements(el)) {
      if (c.localName === localName) out.push(c);
      walk(c);
    }
  };
  walk(node);
  return out;
}
