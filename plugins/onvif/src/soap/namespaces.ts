/** XML namespaces of the ONVIF surface: one table, so that every emitted prefix is declared from it. */
export const NS = {
  env: 'http://www.w3.org/2003/05/soap-envelope',
  wsa: 'http://www.w3.org/2005/08/addressing',
  wsa04: 'http://schemas.xmlsoap.org/ws/2004/08/addressing',
  wsd: 'http://schemas.xmlsoap.org/ws/2005/04/discovery',
  wsse: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd',
  wsu: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
  wsnt: 'http://docs.oasis-open.org/wsn/b-2',
  tt: 'http://www.onvif.org/ver10/schema',
  tds: 'http://www.onvif.org/ver10/device/wsdl',
  trt: 'http://www.onvif.org/ver10/media/wsdl',
  tr2: 'http://www.onvif.org/ver20/media/wsdl',
  tev: 'http://www.onvif.org/ver10/events/wsdl',
  timg: 'http://www.onvif.org/ver20/imaging/wsdl',
  ter: 'http://www.onvif.org/ver10/error',
  tns1: 'http://www.onvif.org/ver10/topics',
  dn: 'http://www.onvif.org/ver10/network/wsdl',
} as const;
export type Prefix = keyof typeof NS;

/** `xmlns:p="…"` for each prefix, to put on the element that uses them. */
export function declare(...prefixes: Prefix[]): string {
  return prefixes.map((p) => `xmlns:${p}="${NS[p]}"`).join(' ');
}

/** Text and attribute values in emitted XML. */
export function xmlEscape(value: string | number | boolean): string {
  return String(value).replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}
