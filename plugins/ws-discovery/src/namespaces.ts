/**
 * The namespaces discovery speaks, with the same URIs and prefixes as the ONVIF plugin's table
 * (plugins/onvif/src/soap/namespaces.ts; a unit test holds them equal). A copy, because the plugin
 * boundary lets a plugin reach another only through its service.ts.
 */
export const NS = {
  env: 'http://www.w3.org/2003/05/soap-envelope',
  wsa: 'http://www.w3.org/2005/08/addressing',
  wsa04: 'http://schemas.xmlsoap.org/ws/2004/08/addressing',
  wsd: 'http://schemas.xmlsoap.org/ws/2005/04/discovery',
  tds: 'http://www.onvif.org/ver10/device/wsdl',
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
