import { DOMParser, type Element } from '@xmldom/xmldom';
import { createLogger } from '../../../../../core/src/log/logger.js';
import { NS } from '../../../../../plugins/onvif/src/soap/namespaces.js';
import { OnvifEvents, type OnvifEventsOptions } from '../../../../../plugins/onvif/src/events/onvif-events.js';

export const WSTOP = 'http://docs.oasis-open.org/wsn/t-1';
export const XS = 'http://www.w3.org/2001/XMLSchema';

/** The first element child of the Body of a SOAP 1.2 envelope around `inner` (clients' mixed prefixes kept). */
export function body(inner: string): Element {
  const xml =
    `<s:Envelope xmlns:s="${NS.env}" xmlns:tev="${NS.tev}" xmlns:wsnt="${NS.wsnt}" xmlns:tns1="${NS.tns1}">` + `<s:Body>${inner}</s:Body></s:Envelope>`;
  const doc = new DOMParser().parseFromString(xml, 'application/xml');
  const b = doc.documentElement!.getElementsByTagNameNS(NS.env, 'Body')[0];
  for (let n = b.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) return n as Element;
  throw new Error('empty body');
}

/** A response as the HTTP server would send it, parsed on its own: every prefix must be declared on it. */
export function parse(xml: string): Element {
  return new DOMParser().parseFromString(xml, 'application/xml').documentElement!;
}

/** Elements with this local name, `root` included, in document order. */
export function elements(root: Element, localName: string): Element[] {
  const below = Array.from(root.getElementsByTagNameNS('*', localName));
  return localName === '*' || root.localName === localName ? [root, ...below] : below;
}

export function text(root: Element, localName: string): string | undefined {
  return elements(root, localName)[0]?.textContent ?? undefined;
}

/** Harness: an OnvifEvents with a clock the test moves and a never-aborted signal. */
export function harness(overrides: Partial<OnvifEventsOptions> = {}) {
  const clock = { ms: Date.parse('2025-03-01T12:00:00Z') };
  const events = new OnvifEvents({
    now: () => clock.ms,
    maxSubscriptions: 3,
    subscriptionUrl: (id) => `http://127.0.0.1:8080/onvif/subscription/${id}`,
    log: createLogger({ level: 'silent' }),
    ...overrides,
  });
  const signal = new AbortController().signal;
  const call = (action: string, inner: string, path = '/onvif/events_service', s: AbortSignal = signal) => events.handle(action, body(inner), path, s);
  async function subscribe(termination = 'PT600S', filter = ''): Promise<{ path: string; url: string; response: Element }> {
    const response = parse(
      await call(
        'CreatePullPointSubscription',
        `<tev:CreatePullPointSubscription>${filter}<tev:InitialTerminationTime>${termination}</tev:InitialTerminationTime></tev:CreatePullPointSubscription>`,
      ),
    );
    const url = text(response, 'Address')!;
    return { url, path: new URL(url).pathname, response };
  }
  const pull = async (path: string, timeout = 'PT0S', limit = 100, s: AbortSignal = signal) =>
    parse(
      await call(
        'PullMessages',
        `<tev:PullMessages><tev:Timeout>${timeout}</tev:Timeout><tev:MessageLimit>${limit}</tev:MessageLimit></tev:PullMessages>`,
        path,
        s,
      ),
    );
  return { clock, events, call, subscribe, pull };
}

/** Each message of a PullMessagesResponse as topic, operation and its Source and Data items. */
export function messages(response: Element) {
  return elements(response, 'NotificationMessage').map((n) => {
    const m = elements(n, 'Message').find((e) => e.namespaceURI === NS.tt)!;
    const items = (where: string) =>
      Object.fromEntries(
        elements(m, where).flatMap((w) =>
          Array.from(w.getElementsByTagNameNS(NS.tt, 'SimpleItem')).map((i) => [i.getAttribute('Name'), i.getAttribute('Value')]),
        ),
      ) as Record<string, string>;
    return {
      topic: text(n, 'Topic')!,
      dialect: elements(n, 'Topic')[0].getAttribute('Dialect'),
      utcTime: m.getAttribute('UtcTime')!,
      operation: m.getAttribute('PropertyOperation'),
      source: items('Source'),
      data: items('Data'),
    };
  });
}

const KNOWN: Record<string, string> = { ...NS, wstop: WSTOP, xs: XS, xml: 'http://www.w3.org/XML/1998/namespace' };

/**
 * Every prefix the document uses is declared in scope with the namespace the table gives it: element
 * and attribute names, and the QNames in Topic text and SimpleItemDescription Type values. Returns the problems.
 */
export function undeclaredPrefixes(root: Element): string[] {
  const problems: string[] = [];
  const check = (el: Element, qname: string, where: string) => {
    const colon = qname.indexOf(':');
    if (colon < 0) return;
    const prefix = qname.slice(0, colon);
    if (prefix === 'xmlns') return;
    const uri = el.lookupNamespaceURI(prefix);
    if (uri === null || uri !== KNOWN[prefix]) problems.push(`${where} ${qname}: ${prefix} → ${uri}`);
  };
  const walk = (el: Element) => {
    check(el, el.tagName, 'element');
    for (const a of Array.from(el.attributes)) {
      check(el, a.name, 'attribute');
      if (el.localName === 'SimpleItemDescription' && a.name === 'Type') check(el, a.value, 'Type value');
    }
    if (el.localName === 'Topic' && el.namespaceURI === NS.wsnt) check(el, el.textContent ?? '', 'topic');
    for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) walk(n as Element);
  };
  walk(root);
  return problems;
}
